-- rotate: TypeFly 2.0's turn, one skill for both directions. A positive
-- angle turns left (counter-clockwise, as ROS measures yaw), a negative one
-- right: its plans turn around with r(180) and step clockwise with r(-30).
return {
  name = "rotate",
  abbr = "r",
  description = "turn by degrees: positive turns left (counter-clockwise), negative right",
  args = {{name = "degrees", type = "int"}},
  returns = "bool",
  run = function(degrees)
    if math.type(degrees) == nil then
      error("rotate: degrees must be a number, got " .. tostring(degrees), 2)
    end
    if degrees >= 0 then return turn_ccw(degrees) end
    return turn_cw(-degrees)
  end,
}
