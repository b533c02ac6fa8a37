-- expect: limit=memory
local t = {}
for i = 1, 64 do t[i] = string.rep('y', 1 << 20) end
local big = {}
for i = 1, 1e9 do big[i] = table.concat(t) end
