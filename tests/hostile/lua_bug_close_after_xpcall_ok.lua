-- expect: ok
-- Next to lua_bug_close_overwrites_message_handler.lua: what stays allowed.
-- A coroutine may yield inside xpcall and be resumed; once its xpcall has
-- returned it may be closed; one suspended inside pcall (no message
-- handler) may be closed at once, running its __close handlers.
local closed = 0
local function make(protect)
  return coroutine.create(function()
    local clo <close> = setmetatable({}, {__close = function() closed = closed + 1 end})
    if protect == "xpcall" then
      assert(xpcall(coroutine.yield, function(m) return m end) == true)
    else
      assert(pcall(coroutine.yield))
    end
    coroutine.yield("past")
  end)
end
-- yield inside xpcall, resume through it, then close
local a = make("xpcall")
assert(coroutine.resume(a))
local ok, where = coroutine.resume(a)
assert(ok and where == "past")
assert(coroutine.close(a) == true and closed == 1)
-- suspended inside pcall: closed at once
local b = make("pcall")
assert(coroutine.resume(b))
assert(coroutine.close(b) == true and closed == 2)
-- suspended inside xpcall: refused, and it can still be resumed to its end
local c = make("xpcall")
assert(coroutine.resume(c))
local refused, msg = pcall(coroutine.close, c)
assert(not refused and msg:find("suspended inside xpcall"), msg)
assert(coroutine.resume(c))
assert(coroutine.close(c) == true and closed == 3)
-- nested xpcalls are counted, not just flagged
local d = coroutine.create(function()
  xpcall(function() xpcall(coroutine.yield, print) coroutine.yield() end, print)
  coroutine.yield()
end)
assert(coroutine.resume(d)) -- inside two
assert(coroutine.resume(d)) -- inside one
assert(not pcall(coroutine.close, d))
assert(coroutine.resume(d)) -- inside none
assert(coroutine.close(d))
print("closes allowed where safe", closed)
