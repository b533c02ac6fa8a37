-- expect: limit=instructions
while true do pcall(table.move, {}, 1, 1 << 40, 2) end
