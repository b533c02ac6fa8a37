if is_visible('person_1') and is_visible('person_2') and is_visible('person_3'):
 a=object_x('person_1');b=object_x('person_2');c=object_x('person_3')
 if a<b and a<c:
  orienting('person_1')
  return True
 if b<c:
  orienting('person_2')
  return True
 orienting('person_3')
 return True
return False
