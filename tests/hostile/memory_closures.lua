-- expect: limit=memory
local fs = {}
while true do local x = {} fs[#fs + 1] = function() return x end end
