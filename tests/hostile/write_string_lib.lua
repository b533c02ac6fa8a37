-- expect: error=read-only
string.rep = function() return '' end
