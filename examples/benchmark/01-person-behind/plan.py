turn_cw(180)
goto('person')
