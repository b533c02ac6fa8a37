-- expect: error=dofile
dofile('/etc/passwd')
