-- expect: limit=instructions
local function go() while true do end end
while true do pcall(pcall, pcall, go) end
