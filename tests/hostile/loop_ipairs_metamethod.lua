-- expect: limit=instructions
local t = setmetatable({}, {__index = function(_, i) return i end})
for _ in ipairs(t) do end
