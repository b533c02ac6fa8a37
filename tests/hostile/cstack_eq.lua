-- expect: error=
local mt = {}
mt.__eq = function(a, b) return a == b end
local a, b = setmetatable({}, mt), setmetatable({}, mt)
return a == b
