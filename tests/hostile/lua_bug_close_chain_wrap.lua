-- expect: error=C stack overflow
-- args: --max-instructions 10000000 --max-memory 16M
-- The chain of lua_bug_close_chain.lua through coroutine.wrap's error path,
-- which closes a dead coroutine's variables the same way (lua_resetthread):
-- each handler calls the next wrapped function, whose coroutine fails and is
-- closed. Whichever count stops it (Lua's own or the sandbox's), the run
-- ends with a C stack error.
local f = false
for i = 1, 9000 do
  local previous = f
  local w = coroutine.wrap(function()
    local cc <close> = setmetatable({}, {__close = function()
      if previous then previous() end
    end})
    coroutine.yield()
    error("fails", 0)
  end)
  w()
  f = w
end
-- every level adds its position to the message: keep the innermost end
local ok, e = pcall(f)
if not ok then error(string.sub(tostring(e), -100), 0) end
print("the chain ran to its end")
