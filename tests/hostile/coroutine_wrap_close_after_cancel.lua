-- expect: limit=cancelled
-- args: --max-instructions 100000000000
-- signal: SIGINT
print('started')
while true do
  pcall(coroutine.wrap(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    while true do end
  end))
end
