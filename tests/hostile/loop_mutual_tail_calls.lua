-- expect: limit=instructions
local g
local function f() return g() end
g = function() return f() end
f()
