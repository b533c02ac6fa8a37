-- TypeFly's "sweeping" (paper, Listings 1 and 3), as written there in the
-- comma dialect: turn in eight 45-degree steps until the object is seen.
-- The built-in `scan` does the same; this file shows a MiniSpec skill.
return {
  name = "sweeping",
  description = "turn in 45-degree steps until the object is visible; True if found",
  args = {{name = "object_name", type = "str"}},
  returns = "bool",
  minispec = "8{?iv,$1==True{->True}tc,45}->False",
}
