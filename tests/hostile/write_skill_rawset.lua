-- expect: error=cannot replace
rawset(_G, 'log', print)
