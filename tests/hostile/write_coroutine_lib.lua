-- expect: error=read-only
coroutine.create = nil
