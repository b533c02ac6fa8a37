-- expect: error=protected metatable
setmetatable(_G, nil)
