-- expect: error=cannot close a coroutine suspended inside xpcall
-- Lua 5.4.4 closes a coroutine that yielded inside xpcall with xpcall's
-- message handler still set, and its __close handlers reuse the stack slot
-- the handler was in (upstream 3fe7be95): the handler below stores a
-- looping function there and raises, and Lua runs the loop as the message
-- handler, inside the error, where no hook runs. Unblocked, `aloft lua` hangs
-- past the instruction budget, --timeout-ms and SIGTERM. The sandbox refuses
-- to close such a coroutine.
local c = coroutine.create(function()
  local clo <close> = setmetatable({}, {__close = function()
    local x = function() while true do end end -- lands on the handler's slot
    error(x)
  end})
  xpcall(coroutine.yield, function() return "handled" end)
end)
assert(coroutine.resume(c))
print(coroutine.close(c))
