-- expect: error=collectgarbage
collectgarbage('stop')
