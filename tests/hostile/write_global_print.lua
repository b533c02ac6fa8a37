-- expect: error=cannot replace
print = function() end
