-- expect: error=not enough memory
error('not enough memory', 0)
