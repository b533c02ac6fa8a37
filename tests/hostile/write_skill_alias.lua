-- expect: error=cannot replace
query = nil
