-- expect: error=too many results
return table.unpack({}, 1, 1e8)
