-- expect: limit=memory
local t = {}
while true do pcall(function() t[#t + 1] = string.rep('z', 1 << 20) end) end
