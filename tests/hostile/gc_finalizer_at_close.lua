-- expect: error=__gc
_keep = setmetatable({}, {__gc = function() while true do end end})
print('should not get here')
