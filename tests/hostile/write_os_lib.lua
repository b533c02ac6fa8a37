-- expect: error=read-only
os.clock = nil
