-- expect: limit=instructions
while true do end
