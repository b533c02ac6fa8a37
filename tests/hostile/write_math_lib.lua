-- expect: error=read-only
math.pi = 3
