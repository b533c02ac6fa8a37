orienting('chair')
take_picture()
