-- expect: error=more than 200 field accesses chained in one expression
-- Lua 5.4.4 names the value of an error by recursing once per access of the
-- chain, scanning the function's code at each step, with no hook (upstream
-- 7923dbbf): a chain of 100,000 accesses works inside the error for minutes,
-- past every budget, a longer one overflows the C stack. The chunk is refused
-- before it is compiled: here 201 accesses, one past the limit (the crash
-- size is run by test_sandbox_hostile.py's check_long_chain).
local a = setmetatable({}, {__index = function(t) return t end})
print("not refused")
local x = a.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b[1]['k'].c.b + 1
