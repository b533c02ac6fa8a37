-- expect: error=read-only
table.insert = nil
