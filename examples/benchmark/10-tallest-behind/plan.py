turn_cw(180)
if is_visible('person_3') and is_visible('person_4') and is_visible('person_5'):
 a=object_height('person_3');b=object_height('person_4');c=object_height('person_5')
 if a>b and a>c:
  orienting('person_3')
  return True
 if b>c:
  orienting('person_4')
  return True
 orienting('person_5')
 return True
return False
