-- expect: limit=instructions
for i = 1, math.huge do end
