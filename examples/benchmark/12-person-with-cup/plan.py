for _ in range(8):
 if is_visible('person') and is_visible('cup'):
  log('Found a person with a cup in hand')
  return True
 turn_cw(45)
log('Nobody with a cup in sight')
return False
