-- expect: limit=instructions
local cos = {}
for i = 1, 200 do cos[i] = coroutine.create(function() while true do for j = 1, 100 do end coroutine.yield() end end) end
while true do for i = 1, #cos do coroutine.resume(cos[i]) end end
