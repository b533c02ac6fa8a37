-- expect: error=dump
return string.dump(print)
