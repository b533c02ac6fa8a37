-- expect: error=cannot replace
rawset(_ENV, 'turn_cw', function() end)
