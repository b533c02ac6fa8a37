-- goto: face an object, then fly to it. A high-level skill made of two
-- others: every skill is a global function, so skills compose like this.
return {
  name = "goto",
  description = "turn to face the object, then approach it (to about distance cm, if given); "
    .. "False if it is not visible",
  args = {{name = "object_name", type = "str"},
          {name = "distance", type = "int", optional = true}},
  returns = "bool",
  run = function(object_name, distance)
    return orienting(object_name) and approach(object_name, distance)
  end,
}
