-- expect: error=load
return load(string.char(27) .. 'Lua')
