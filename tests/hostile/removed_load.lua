-- expect: error=load
load('return 1')()
