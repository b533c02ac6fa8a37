-- expect: ok
-- Just inside the C stack guard of coroutine.close and resume: C calls
-- nested 190 deep (Lua itself stops at 200) by every construct that nests
-- them, then a coroutine resumed and closed at the bottom, must still work.
local DEPTH = 190
local function bottom()
  local co = coroutine.create(function()
    local c <close> = setmetatable({}, {__close = function() end})
    coroutine.yield()
  end)
  assert(coroutine.resume(co))
  assert(coroutine.close(co))
  return true
end
for _, kind in ipairs({"pcall", "xpcall", "index", "concat", "sort", "wrap"}) do
  local function nest(n)
    if n >= DEPTH then return bottom() end
    if kind == "pcall" then
      local ok, e = pcall(nest, n + 1)
      if not ok then error(e, 0) end
      return e
    elseif kind == "xpcall" then
      local ok, e = xpcall(nest, function(m) return m end, n + 1)
      if not ok then error(e, 0) end
      return e
    elseif kind == "index" then
      return setmetatable({}, {__index = function() return nest(n + 1) end}).x
    elseif kind == "concat" then
      return setmetatable({}, {__concat = function() return nest(n + 1) end}) .. "x"
    elseif kind == "wrap" then
      return coroutine.wrap(nest)(n + 1)
    end
    local r
    table.sort({1, 2}, function() r = nest(n + 1) return false end)
    return r
  end
  assert(nest(1) == true, kind)
end
print("190 nested C calls, then close and resume: fine")
