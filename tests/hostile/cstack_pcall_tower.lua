-- expect: error=
local function f() return pcall(f) end
local r = {f()}
error('end: ' .. tostring(r[1]))
