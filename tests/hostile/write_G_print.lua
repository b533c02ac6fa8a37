-- expect: error=cannot replace
_G.print = nil
