-- expect: error=
local t = {}
setmetatable(t, {__tostring = function(x) return tostring(x) end})
return tostring(t)
