-- expect: error=__gc
setmetatable({}, {__gc = false})
