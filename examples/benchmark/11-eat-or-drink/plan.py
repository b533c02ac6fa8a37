if scan('apple'):
 goto('apple')
 scan('person')
 goto('person')
 return True
if scan('bottle'):
 goto('bottle')
 return True
return False
