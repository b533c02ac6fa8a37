-- expect: error=cannot replace
move_forward = function() return true end
