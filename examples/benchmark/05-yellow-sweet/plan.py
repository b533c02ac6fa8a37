if scan('banana'):
 goto('banana')
 return True
return False
