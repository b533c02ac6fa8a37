-- expect: limit=instructions
-- args: --timeout-ms 5000
-- The coroutine dies of the limit inside the count hook; closing it must not
-- run its looping __close handler without the hook.
local co = coroutine.create(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  while true do end
end)
print(coroutine.resume(co))
print(coroutine.close(co))
while true do end
