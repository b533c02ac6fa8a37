-- expect: limit=instructions
while true do xpcall(function() while true do end end, function(e) while true do end end) end
