-- expect: ok
pcall(function() string.upper = nil end)
assert(('abc'):upper() == 'ABC')
