-- expect: limit=memory
local function f(t) return f({t, {}, {}, {}}) end
f({})
