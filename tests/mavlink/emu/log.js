'use strict';
// The emulator's log: one line per message received and per state change,
// "KIND {json}", for tests to assert on. Written synchronously so that a
// test reading it after an event sees the event.
const fs = require('fs');

class Log {
  constructor(file) {
    this.fd = file ? fs.openSync(file, 'a') : null;
    this.t0 = Date.now();
  }

  line(kind, fields) {
    if (this.fd === null) return;
    const t = (Date.now() - this.t0) / 1000;
    const wall = Date.now() / 1000; // for tests timing another process against it
    fs.writeSync(this.fd, kind + ' ' + JSON.stringify({ t, wall, ...fields }) + '\n');
  }
}

module.exports = { Log };
