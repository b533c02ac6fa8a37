-- expect: limit=cancelled
-- args: --max-instructions 100000000000
-- signal: SIGINT
print('started')
local co = coroutine.create(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  while true do end
end)
print(coroutine.resume(co))
print(coroutine.close(co))
while true do end
