-- expect: fail
-- contained: any metatable can be made weak after the fact (its own metatable gains __mode by a plain assignment), and the refused allocation that collects it is the memory cap itself
-- Lua 5.4.4's luaV_finishset keeps a pointer to a metatable's __newindex
-- table while inserting into it; if the metatable is weak and the insertion's
-- allocation is refused, the emergency collection that Lua runs before the
-- second try frees that table, and the insertion goes on in freed memory
-- (fixed upstream in 983bc433). The sandbox's memory cap is what refuses.
local live = {}
for i = 1, 100 do live[i] = string.rep("x", 100000) .. i end
for round = 1, 20 do
  local mt = setmetatable({__newindex = {}}, {__mode = 'v'})
  local t = setmetatable({}, mt)
  for i = 1, 30 do local garbage = string.rep("y", 100000) .. i end
  for i = 1, 1000000 do t[i] = true end
end
print("survived", #live)
