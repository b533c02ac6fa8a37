-- expect: error=cannot replace
rawset(_G, 'print', nil)
