-- expect: limit=instructions
while true do
  pcall(function()
    local guard <close> = setmetatable({}, {__close = function() for i = 1, 10 do end end})
    while true do end
  end)
end
