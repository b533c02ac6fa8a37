-- expect: limit=instructions
local t = {3, 2, 1, 5, 4}
table.sort(t, function(a, b) while true do end end)
