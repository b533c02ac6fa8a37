-- expect: error=require
require('os')
