-- expect: limit=instructions
-- Closing in a loop, each close caught: the limit still reaches the host.
while true do
  local co = coroutine.create(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    while true do end
  end)
  pcall(coroutine.resume, co)
  pcall(coroutine.close, co)
end
