-- expect: error=debug
debug.sethook()
