-- expect: error=
getmetatable('').__index = {upper = function() return 'pwned' end}
