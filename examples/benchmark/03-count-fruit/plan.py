n=0
if is_visible('apple'):n+=1
if is_visible('banana'):n+=1
if is_visible('orange'):n+=1
if is_visible('lemon'):n+=1
if is_visible('pear'):n+=1
log(n)
