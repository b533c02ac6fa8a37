-- expect: error=
local function f() return coroutine.wrap(f)() end
f()
