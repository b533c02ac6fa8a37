-- goto: face an object, then fly to it. A high-level skill made of two
-- others: every skill is a global function, so skills compose like this.
return {
  name = "goto",
  description = "turn to face the object, then approach it; False if it is not visible",
  args = {{name = "object_name", type = "str"}},
  returns = "bool",
  run = function(object_name)
    return orienting(object_name) and approach(object_name)
  end,
}
