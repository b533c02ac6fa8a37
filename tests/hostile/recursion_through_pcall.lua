-- expect: fail
local function f() pcall(f) f() end
f()
