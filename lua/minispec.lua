-- The MiniSpec runtime (SPEC §4): what compiled plans call, as the global
-- `minispec` (plans name it `ms`). The compiler (host/minispec/emit.c) writes
-- plain Lua where Lua already means what MiniSpec means (==, ~=, and, or,
-- + - *) and calls in here where it does not.
--
-- Rules, decided once here:
--   truth     Python's, as in TypeFly: False, None, 0 and '' are false;
--             everything else is true.
--   compare   numbers numerically (int and float mix); == across types is
--             false and != true (plain Lua ==); ordering (< > <= >=)
--             between two numbers, or a bool (0/1) and a number; anything
--             else is an error that says so.
--   arith     numbers only; '/' is float division and refuses zero.
--   probe     its answers arrive coerced by the probe skill
--             (host/skills/probe_answer.h), the one place of that rule.
--   rp        calls the replan skill, then the plan ends (the compiler
--             writes `do return ms.replan() end`).

local ms = {}

local type, error, tostring, select = type, error, tostring, select
local env = _ENV

-- Skills are globals under their full names; the compiler has already
-- checked that NAME exists and how many arguments it takes.
function ms.call(name, ...)
  local skill = env[name]
  if skill == nil then
    error("unknown skill '" .. tostring(name) .. "'", 2)
  end
  return (skill(...))
end

function ms.replan()
  local replan = env.replan
  if replan ~= nil then replan() end
  return nil
end

function ms.truth(x)
  return not (x == nil or x == false or x == 0 or x == "")
end

local function describe(x)
  local t = type(x)
  if t == "string" then return "text '" .. x .. "'" end
  if t == "boolean" then return x and "True" or "False" end
  if t == "nil" then return "None" end
  return t .. " " .. tostring(x)
end

-- A bool orders as 0/1 against a number, as in Python: TypeFly 2023's
-- orienting tests `?_1>0.6` with _1 False when the object is out of view.
local function ordinal(x)
  if x == true then return 1 end
  if x == false then return 0 end
  return x
end

local function ordered(op, a, b)
  local ta, tb = type(a), type(b)
  if ta == "number" and tb == "number" then return a, b end
  if (ta == "boolean" and tb == "number") or (ta == "number" and tb == "boolean") then
    return ordinal(a), ordinal(b)
  end
  error("cannot compare " .. describe(a) .. " " .. op .. " " .. describe(b)
        .. ": '" .. op .. "' compares numbers only (or a bool with a number)", 3)
end

function ms.lt(a, b) a, b = ordered("<", a, b) return a < b end
function ms.gt(a, b) a, b = ordered(">", a, b) return a > b end
function ms.le(a, b) a, b = ordered("<=", a, b) return a <= b end
function ms.ge(a, b) a, b = ordered(">=", a, b) return a >= b end

function ms.num(x)
  if type(x) ~= "number" then
    error("arithmetic needs numbers, got " .. describe(x), 2)
  end
  return x
end

function ms.div(a, b)
  if type(a) ~= "number" or type(b) ~= "number" then
    error("arithmetic needs numbers, got " .. describe(type(a) ~= "number" and a or b), 2)
  end
  if b == 0 then error("division by zero", 2) end
  return a / b
end

return ms
