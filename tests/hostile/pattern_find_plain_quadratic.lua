-- expect: ok
local hay = string.rep('a', 1 << 20)
local needle = string.rep('a', 1 << 19) .. 'b'
assert(hay:find(needle, 1, true) == nil)
