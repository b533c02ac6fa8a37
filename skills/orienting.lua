-- orienting: turn until the object is in the middle of the view.
--
-- object_x is the object's horizontal position in the view, 0 (left) to 1
-- (right). The camera sees about 80 degrees, so an object at x is about
-- (x - 0.5) * 80 degrees off the heading; turn that much and look again.
-- A few rounds absorb the estimate's error.
-- Detection flickers (a frame can miss an object): look up to three times.
local function position(object_name)
  for _ = 1, 3 do
    local x = object_x(object_name)
    if x then return x end
  end
  return false
end

return {
  name = "orienting",
  description = "turn until the object is centred in the view (x between 0.4 and 0.6); "
    .. "False if it is not visible",
  args = {{name = "object_name", type = "str"}},
  returns = "bool",
  run = function(object_name)
    for _ = 1, 5 do
      local x = position(object_name)
      if x == false then return false end
      if x >= 0.4 and x <= 0.6 then return true end
      local degrees = math.max(1, math.floor(math.abs(x - 0.5) * 80 + 0.5))
      if x < 0.5 then turn_ccw(degrees) else turn_cw(degrees) end
    end
    local x = position(object_name)
    return x ~= false and x >= 0.4 and x <= 0.6
  end,
}
