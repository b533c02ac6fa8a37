-- expect: error=
local mt = {}
mt.__lt = function(a, b) return a < b end
local t = {}
for i = 1, 10 do t[i] = setmetatable({}, mt) end
table.sort(t)
