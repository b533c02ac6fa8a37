-- expect: limit=instructions
local ok, e = pcall(function() while true do end end)
while true do pcall(error, e) end
