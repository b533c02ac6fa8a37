-- expect: limit=memory
while true do pcall(string.rep, 'x', 1 << 28) end
