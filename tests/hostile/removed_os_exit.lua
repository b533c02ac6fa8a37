-- expect: error=exit
os.exit(0)
