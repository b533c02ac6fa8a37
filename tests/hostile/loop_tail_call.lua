-- expect: limit=instructions
local function f(n) return f(n + 1) end
f(1)
