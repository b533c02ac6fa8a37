-- expect: error=protected metatable
setmetatable(string, {})
