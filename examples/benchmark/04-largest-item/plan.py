goto('person')
