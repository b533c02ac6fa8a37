-- expect: limit=instructions
::top:: goto top
