-- expect: ok
x = 1
_G.y = 2
rawset(_G, 'z', 3)
assert(x + y + z == 6)
