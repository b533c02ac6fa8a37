-- TypeFly's "approach" (paper, Listing 8): simply fly 120 cm forward. Named
-- approach_typefly so that it can sit next to the built-in approach.
return {
  name = "approach_typefly",
  description = "fly 120 cm forward towards the object in front",
  args = {},
  returns = "bool",
  minispec = "mf,120",
}
