-- expect: error=patterns are not available
return string.find(('a'):rep(40), '(a*)*b')
