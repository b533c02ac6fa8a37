-- expect: ok
-- Not an attack: 5 MiB live under an 8 MiB cap, with lots of garbage. The cap
-- is judged after collection, so this must run to its end.
local keep = {}
for i = 1, 5 do keep[i] = string.rep(tostring(i), 1 << 20) end
for i = 1, 300 do local s = string.rep('x', 1 << 20) .. i end
local t = {}
for i = 1, 2000 do t[#t + 1] = string.rep('y', 1000) .. i; if #t > 500 then t = {} end end
assert(#keep == 5)
