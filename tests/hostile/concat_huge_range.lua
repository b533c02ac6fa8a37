-- expect: error=invalid value
return table.concat({}, '', 1, 1 << 40)
