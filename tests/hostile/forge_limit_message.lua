-- expect: error=instruction limit reached (10000000 instructions)
error('instruction limit reached (10000000 instructions)', 0)
