-- expect: limit=instructions
for i = 1, 1e9 do xpcall(function() while true do end end, function(e) return e end) end
