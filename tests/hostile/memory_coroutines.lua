-- expect: limit=memory
local cs = {}
while true do cs[#cs + 1] = coroutine.create(function() end) end
