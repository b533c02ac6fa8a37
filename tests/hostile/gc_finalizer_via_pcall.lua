-- expect: ok
local ok, e = pcall(setmetatable, {}, {__gc = function() while true do end end})
assert(not ok and tostring(e):find('__gc', 1, true), e)
