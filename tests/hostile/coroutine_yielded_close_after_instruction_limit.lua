-- expect: limit=instructions
-- args: --timeout-ms 5000
-- A coroutine suspended (yielded) before the limit, closed after another
-- coroutine tripped it: its looping __close must not run on.
local waiting = coroutine.create(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  coroutine.yield()
end)
coroutine.resume(waiting)
local spender = coroutine.create(function() while true do end end)
print(coroutine.resume(spender))
print(coroutine.close(waiting))
print(coroutine.resume(waiting))
while true do end
