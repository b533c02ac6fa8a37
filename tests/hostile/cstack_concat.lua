-- expect: error=
local mt = {}
mt.__concat = function(a, b) return a .. b end
local t = setmetatable({}, mt)
return t .. 'x'
