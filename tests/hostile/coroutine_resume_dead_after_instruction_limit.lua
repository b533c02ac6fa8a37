-- expect: limit=instructions
-- args: --timeout-ms 5000
-- Resuming a coroutine that died of the limit runs nothing of it.
local co = coroutine.create(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  while true do end
end)
print(coroutine.resume(co))
print(coroutine.resume(co))
print(coroutine.status(co))
while true do end
