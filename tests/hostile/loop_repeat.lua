-- expect: limit=instructions
repeat local x = 1 until false
