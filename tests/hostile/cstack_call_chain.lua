-- expect: fail
local mt = {}
mt.__call = function(self) return self() end
return setmetatable({}, mt)()
