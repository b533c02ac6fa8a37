-- expect: limit=memory
local s = string.rep('x', 1 << 30)
