-- expect: limit=instructions
-- A coroutine.wrap function is itself the __close handler (a C function,
-- called with no Lua instruction before it) of a variable closed while the
-- limit error unwinds.
local body = coroutine.wrap(function()
  local guard <close> = setmetatable({}, {__close = function() while true do end end})
  coroutine.yield()
  while true do end
end)
body()
while true do
  pcall(function()
    local x <close> = setmetatable({}, {__close = body})
    while true do end
  end)
end
