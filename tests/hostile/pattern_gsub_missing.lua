-- expect: error=gsub
return string.gsub(('a'):rep(40), '(a*)*b', '')
