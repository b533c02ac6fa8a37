-- expect: error=loadfile
loadfile('/etc/passwd')
