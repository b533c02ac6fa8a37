-- expect: limit=instructions
-- args: --timeout-ms 5000
-- coroutine.wrap inside coroutine.wrap, each with a looping __close.
local function level(n)
  return coroutine.wrap(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    if n > 0 then pcall(level(n - 1)) end
    while true do end
  end)
end
while true do pcall(level(3)) end
