-- expect: error=io
io.open('/etc/passwd')
