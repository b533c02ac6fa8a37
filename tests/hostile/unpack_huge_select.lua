-- expect: error=too many results
return select('#', table.unpack({}, 1, 1 << 30))
