-- TypeFly's "orienting" (paper, Listing 8): turn in 15-degree steps until the
-- object is centred. Named orienting_typefly so that it can sit next to the
-- built-in orienting. As in the paper, an object that is not visible makes
-- object_x return False, which orders as 0 against a number, as in Python
-- (SPEC §4): `?_1<0.4` holds and the drone turns left looking for it.
return {
  name = "orienting_typefly",
  description = "turn until the object is centred in the view; True when centred",
  args = {{name = "object_name", type = "str"}},
  returns = "bool",
  minispec = "4{_1=ox,$1;?_1>0.6{tc,15};?_1<0.4{tu,15};_2=ox,$1;?_2<0.6&_2>0.4{->True}}->False",
}
