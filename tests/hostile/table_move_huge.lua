-- expect: limit=instructions
table.move({}, 1, 1 << 50, 2)
