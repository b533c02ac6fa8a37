-- expect: limit=instructions
while true do
  pcall(function()
    local guard <close> = setmetatable({}, {__close = function() while true do end end})
    while true do end
  end)
end
