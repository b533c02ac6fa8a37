-- expect: ok
assert(string.rep('', 1 << 62) == '')
assert(string.rep('', 1 << 62, '') == '')
