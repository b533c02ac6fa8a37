-- expect: limit=timeout
-- args: --max-instructions 100000000000 --timeout-ms 300
print('started')
while true do
  pcall(coroutine.wrap(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    while true do end
  end))
end
