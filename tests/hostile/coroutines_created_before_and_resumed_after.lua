-- expect: limit=instructions
local co = coroutine.create(function() while true do coroutine.yield() end end)
pcall(function() while true do end end)
while true do coroutine.resume(co) end
