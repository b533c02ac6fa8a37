-- expect: fail
local function nest(n) return coroutine.wrap(function() if n > 0 then nest(n - 1)() end while true do end end) end
nest(150)()
