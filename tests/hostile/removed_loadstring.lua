-- expect: error=loadstring
loadstring('return 1')()
