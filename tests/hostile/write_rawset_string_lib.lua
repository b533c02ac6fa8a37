-- expect: error=read-only
rawset(string, 'upper', string.lower)
