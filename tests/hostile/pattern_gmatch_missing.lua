-- expect: error=gmatch
for w in string.gmatch('a b c', '%a+') do end
