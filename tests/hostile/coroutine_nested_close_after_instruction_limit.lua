-- expect: limit=instructions
-- args: --timeout-ms 5000
-- Three levels of coroutines, each with a looping __close; the innermost
-- trips the limit, every level catches and closes the one below.
local function level(n)
  return coroutine.create(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    if n > 0 then
      local inner = level(n - 1)
      coroutine.resume(inner)
      coroutine.close(inner)
    end
    while true do end
  end)
end
local top = level(3)
coroutine.resume(top)
coroutine.close(top)
while true do end
