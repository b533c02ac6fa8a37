-- expect: limit=instructions
local ok, e = pcall(function() while true do end end)
print('caught', ok, type(e))
while true do end
