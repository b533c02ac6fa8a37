turn_ccw(90)
if is_visible('scissors'):
 orienting('scissors')
 log('Yes, there are scissors on the table')
 return True
log('No, I cannot see anything for cutting paper')
return False
