-- The sandbox's coroutine.close, coroutine.resume and coroutine.wrap behave as
-- Lua's own while no limit has tripped: results, yields, errors (with their
-- position), to-be-closed variables closed on error and on close, bad
-- arguments named.
local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
  end)
end
local sum = 0
for v in gen(5) do sum = sum + v end
print("sum", sum)

local closed = {}
local function closer(name)
  return setmetatable({}, {__close = function(_, err) closed[#closed + 1] = name .. ":" .. tostring(err) end})
end

local co = coroutine.create(function(a)
  local x <close> = closer("x")
  local b = coroutine.yield(a * 2)
  return a + b
end)
print(coroutine.resume(co, 3))
print(coroutine.status(co))
print(coroutine.resume(co, 4))
print(coroutine.status(co), table.concat(closed, " "))
print(coroutine.resume(co))

local suspended = coroutine.create(function()
  local y <close> = closer("y")
  coroutine.yield()
end)
coroutine.resume(suspended)
print(coroutine.close(suspended), table.concat(closed, " "))

local failing = coroutine.create(function()
  local z <close> = closer("z")
  error("bad", 0)
end)
print(coroutine.resume(failing))
print(coroutine.close(failing))
print(table.concat(closed, " "))

local w = coroutine.wrap(function()
  local v <close> = closer("v")
  error("in wrap")
end)
print(pcall(w))
print(table.concat(closed, " "))
local t = coroutine.wrap(function() error({code = 7}) end)
local ok, e = pcall(t)
print(ok, type(e), e.code)

print(pcall(coroutine.close))
print(pcall(coroutine.resume, 1))
print(pcall(coroutine.wrap, 1))
print(pcall(coroutine.close, coroutine.running()))
local again = coroutine.wrap(function() return 1 end)
print(again())
print(pcall(again))
print(coroutine.isyieldable(), select(2, coroutine.running()))
