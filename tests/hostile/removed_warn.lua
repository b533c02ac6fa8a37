-- expect: error=warn
warn('@on')
