-- expect: error=remove
os.remove('/tmp/x')
