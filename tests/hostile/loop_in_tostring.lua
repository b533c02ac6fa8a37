-- expect: limit=instructions
local t = setmetatable({}, {__tostring = function() while true do end end})
print(t)
