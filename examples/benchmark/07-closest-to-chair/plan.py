turn_cw(180)
goto('apple')
