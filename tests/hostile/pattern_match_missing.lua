-- expect: error=match
return ('a'):rep(40):match('(a*)*b')
