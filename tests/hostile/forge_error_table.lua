-- expect: error=table value
error({limit = 'instructions'})
