-- expect: limit=instructions
while true do print(string.rep('x', 1000)) end
