-- expect: error=
local t = setmetatable({}, {})
getmetatable(t).__index = function(tt, k) return tt[k] end
return t.x
