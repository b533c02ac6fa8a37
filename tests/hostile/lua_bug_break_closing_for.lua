-- expect: fail
-- contained: the closing value of a generic for can come from any call (an iterator factory returning four values), so the source cannot show which loops have one
-- Lua 5.4.4 compiles `break` out of a generic for that has a closing value
-- (its fourth value) and an upvalue in its body with the wrong close level
-- (fixed upstream in 997f11f5): the closing value is left open on the
-- stack, and a later <close> variable in the function runs on a corrupt
-- list of to-be-closed variables. Here the wrong code shows as "attempt to
-- call a nil value"; other shapes end in SIGSEGV.
local o1 = setmetatable({}, {__close = function() end})
local function test()
  for k, v in next, {}, nil, o1 do
    local function f() return k end
    break
  end
  local x <close> = setmetatable({}, {__close = function() end})
  return 1
end
for i = 1, 100 do test() end
print("survived")
