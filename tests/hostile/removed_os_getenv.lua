-- expect: error=getenv
return os.getenv('HOME')
