-- expect: error=execute
os.execute('true')
