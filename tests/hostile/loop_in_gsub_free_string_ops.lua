-- expect: limit=instructions
local s = ''
while true do s = s:upper():lower() end
