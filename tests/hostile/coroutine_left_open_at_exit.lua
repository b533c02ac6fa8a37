-- expect: limit=instructions
-- Coroutines left suspended or dead with looping __close handlers when the
-- run ends: closing the state runs none of them.
local keep = {}
for i = 1, 3 do
  keep[i] = coroutine.create(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    coroutine.yield()
    while true do end
  end)
  coroutine.resume(keep[i])
end
coroutine.resume(keep[1])
while true do end
