-- expect: fail
local s = string.rep('x', 1 << 22)
return s:byte(1, -1)
