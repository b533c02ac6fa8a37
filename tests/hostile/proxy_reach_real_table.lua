-- expect: ok
-- Every read-only library proxy against every way a script could reach the
-- table behind it: whatever comes back is the proxy itself or not a table,
-- and no write through it sticks. (pairs used to return the real table:
-- `local _, real = pairs(string); real.upper = f` changed string.upper for
-- every chunk of the mission.)
local proxies = {string = string, table = table, math = math, utf8 = utf8,
                 coroutine = coroutine, os = os}
if minispec ~= nil then proxies.minispec = minispec end

local function evil() return "EVIL" end
local seen = 0

-- V came back from some way into the proxy P: it must not be a table other
-- than P, and writing through it must fail.
local function judge(how, name, p, v)
  seen = seen + 1
  if type(v) ~= "table" or rawequal(v, p) then return end
  local ok = pcall(function() v.upper = evil; v.insert = evil; v.floor = evil end)
  local ok2 = pcall(rawset, v, "upper", evil)
  error(string.format("%s(%s) gave a table other than the proxy (write %s, rawset %s)",
                      how, name, tostring(ok), tostring(ok2)), 0)
end

local function all_results(...) return select("#", ...), {...} end

for name, p in pairs(proxies) do
  -- pairs: every value of the triple, and what its iterator yields
  local n, r = all_results(pairs(p))
  for i = 1, n do judge("pairs", name, p, r[i]) end
  local iter, st, k0 = pairs(p)
  local count = 0
  for k, v in iter, st, k0 do
    judge("pairs loop", name, p, k); judge("pairs loop", name, p, v)
    count = count + 1
  end
  assert(count > 0, name .. ": pairs over a library lists its functions")
  -- the iterator called by hand, with other first arguments
  for _, arg in ipairs({p, {}, "x", 1}) do
    local ok, a, b = pcall(iter, arg, nil)
    if ok then judge("pairs iterator", name, p, a); judge("pairs iterator", name, p, b) end
  end
  -- next, ipairs, the raw functions
  n, r = all_results(next(p)); for i = 1, n do judge("next", name, p, r[i]) end
  n, r = all_results(ipairs(p)); for i = 1, n do judge("ipairs", name, p, r[i]) end
  for _, v in ipairs(p) do judge("ipairs loop", name, p, v) end
  judge("rawget", name, p, rawget(p, "upper"))
  assert(not pcall(rawset, p, "upper", evil), name .. ": rawset on a proxy")
  assert(rawequal(p, p) and not rawequal(p, {}), name .. ": rawequal")
  assert(rawlen(p) == 0, name .. ": rawlen sees only the empty proxy")
  -- metatables
  judge("getmetatable", name, p, getmetatable(p))
  assert(getmetatable(p) == false, name .. ": the metatable is hidden")
  assert(not pcall(setmetatable, p, {}), name .. ": setmetatable on a proxy")
  -- writes and their metamethods (__newindex receives the proxy, not the table)
  assert(not pcall(function() p.upper = evil end), name .. ": plain write")
  assert(not pcall(table.insert, p, evil), name .. ": table.insert")
  assert(not pcall(table.move, {evil}, 1, 1, 1, p), name .. ": table.move into a proxy")
  judge("#", name, p, #p)
  -- through coroutines and the protected calls
  n, r = all_results(coroutine.wrap(function() return pairs(p) end)())
  for i = 1, n do judge("coroutine.wrap(pairs)", name, p, r[i]) end
  local co = coroutine.create(pairs)
  n, r = all_results(coroutine.resume(co, p)); for i = 1, n do judge("coroutine.resume(pairs)", name, p, r[i]) end
  n, r = all_results(pcall(pairs, p)); for i = 1, n do judge("pcall(pairs)", name, p, r[i]) end
  n, r = all_results(xpcall(next, function(e) return e end, p))
  for i = 1, n do judge("xpcall(next)", name, p, r[i]) end
  -- __index is a table: an error message must not carry it either
  local ok, e = pcall(function() return p.nothing.deeper end)
  judge("error object", name, p, e)
  -- a table with the proxy as __index: metamethods there get the script's table
  local child = setmetatable({}, {__index = p})
  judge("inherited", name, p, child.nothing)
end

-- the string metatable and its __index
judge("getmetatable('')", "string", string, getmetatable(""))
assert(getmetatable("") == false)
judge('("").x', "string", string, ("").x)
assert(not pcall(function() local s = ""; s.upper = evil end))

-- the removed ways to reach tables stay removed
assert(debug == nil and load == nil and loadstring == nil and require == nil)

-- nothing changed: a method call and a library call still work as before
assert(string.upper("a") == "A" and ("a"):upper() == "A")
assert(table.concat({1, 2}, ",") == "1,2" and math.floor(1.5) == 1)
assert(seen > 100)
print("no way to the real tables", seen)
