if scan('apple'):
 goto('apple')
 log('Found an apple and flew to it')
 return True
log('I cannot find an apple')
return False
