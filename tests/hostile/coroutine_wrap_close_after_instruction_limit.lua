-- expect: limit=instructions
-- args: --timeout-ms 5000
-- The error path of a coroutine.wrap function closes the dead coroutine's
-- to-be-closed variables: here a looping __close, after the limit.
while true do
  pcall(coroutine.wrap(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    while true do end
  end))
end
