'use strict';
// --pause-stream MSGID,AFTER_S,FOR_MS: one telemetry stream stops for a
// while, the others (the HEARTBEAT too) go on. Once the vehicle has been in
// the air (landed state IN_AIR) for AFTER_S seconds, message MSGID is not
// streamed for FOR_MS ms; then it streams again at its interval. For tests
// of aloft's request for a stream that stopped coming: the request counts
// as lost, the stream as interrupted on the way.
//
// Self-contained: it wraps the vehicle's stream() and leaves the rest alone.
const { LANDED } = require('./vehicle');
const telemetry = require('./telemetry');

function parse(s) {
  const m = /^(\d+),([0-9.]+),([0-9.]+)$/.exec(s || '');
  if (!m) return null;
  const [id, afterS, forMs] = m.slice(1).map(Number);
  const name = telemetry.nameOf(id);
  if (!name || !Number.isFinite(afterS) || !(forMs > 0) || forMs > 3600000) return null;
  return { name, afterS, forMs };
}

function install(v, pause) {
  const stream = v.stream.bind(v);
  let inAirAt = null;
  let state = 'waiting'; // waiting | paused | over
  let from = 0;
  v.stream = () => {
    if (state !== 'over') step();
    stream();
  };
  function step() {
    const now = v.now();
    if (state === 'waiting') {
      if (!v.armed || v.landed !== LANDED.IN_AIR) {
        inAirAt = null;
        return;
      }
      if (inAirAt === null) inAirAt = now;
      if (now - inAirAt < pause.afterS * 1000) return;
      state = 'paused';
      from = now;
      v.event('stream_paused', { msg: pause.name, for_ms: pause.forMs });
    }
    if (now - from >= pause.forMs) {
      state = 'over';
      v.event('stream_resumed', { msg: pause.name });
      return;
    }
    // sent just now, as far as stream() can tell: not sent again yet
    v.lastSent.set(pause.name, now);
  }
}

module.exports = { parse, install };
