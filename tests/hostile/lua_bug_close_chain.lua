-- expect: error=C stack overflow: coroutines closed from __close handlers nested too deeply
-- args: --max-instructions 10000000 --max-memory 16M
-- Lua 5.4.4 restarts the C-call count of a coroutine being closed (upstream
-- 1e64c139): each coroutine's __close handler closes the one before it, and
-- the chain recurses in C until the process dies of SIGSEGV (at the default
-- budgets). The sandbox measures the C stack in coroutine.close and ends the
-- chain with an error; each handler passes it on.
local function close(co)
  -- pcall adds C frames to each level, as an attacker would
  local ok, closed, err = pcall(coroutine.close, co)
  if not ok then error(closed, 0) end
  if not closed then error(err, 0) end
end
local coro = false
for i = 1, 9000 do
  local previous = coro
  coro = coroutine.create(function()
    local cc <close> = setmetatable({}, {__close = function()
      if previous then close(previous) end
    end})
    coroutine.yield()
  end)
  assert(coroutine.resume(coro))
end
close(coro)
print("the chain ran to its end")
