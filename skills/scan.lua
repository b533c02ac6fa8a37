-- scan: look around for an object by turning on the spot.
--
-- Checks the view, then turns 45 degrees clockwise, eight times: one full
-- circle, so an object anywhere around the drone is found. The camera sees
-- about 80 degrees, so the 45 degree steps overlap.
--
-- The same skill in MiniSpec would be:
--   minispec = "8{?iv($1)==True{->True}tc(45)}->False"
return {
  name = "scan",
  description = "turn in 45 degree steps (one full circle) until the object is visible; "
    .. "True if found",
  args = {{name = "object_name", type = "str"}},
  returns = "bool",
  run = function(object_name)
    for _ = 1, 8 do
      if is_visible(object_name) then return true end
      turn_cw(45)
    end
    return false
  end,
}
