'use strict';
// --gust CM_S,AFTER_S,FOR_S: a wind the vehicle cannot hold against. Once
// it has been in the air (landed state IN_AIR) for AFTER_S seconds, the
// vehicle is pushed east at CM_S cm/s for FOR_S seconds on top of what it
// flies; its position control fights back at most at --speed, so a gust
// faster than that carries it off, and it reports where it is (position
// and velocity). After the gust it flies to its target again. For tests of
// aloft's watch on the measured state: a vehicle that leaves the geofence
// without being told to.
//
// Self-contained: it wraps the vehicle's move() and leaves the kinematic
// model and the personalities alone.
const { LANDED } = require('./vehicle');

function parse(s) {
  const m = /^([0-9.]+),([0-9.]+),([0-9.]+)$/.exec(s || '');
  if (!m) return null;
  const [cmS, afterS, forS] = m.slice(1).map(Number);
  if (![cmS, afterS, forS].every(Number.isFinite) || cmS <= 0 || cmS > 10000 || forS <= 0) return null;
  return { cmS, afterS, forS };
}

function install(v, gust) {
  const move = v.move.bind(v);
  let inAirAt = null;
  let state = 'waiting'; // waiting | blowing | over
  v.move = (dt) => {
    move(dt);
    if (state === 'over') return;
    if (!v.armed || v.landed !== LANDED.IN_AIR) {
      inAirAt = null;
      return;
    }
    if (inAirAt === null) inAirAt = v.now();
    const t = (v.now() - inAirAt) / 1000;
    if (t < gust.afterS) return;
    if (t >= gust.afterS + gust.forS) {
      state = 'over';
      v.event('gust', { over: true });
      return;
    }
    if (state === 'waiting') {
      state = 'blowing';
      v.event('gust', { cm_s: gust.cmS, for_s: gust.forS });
    }
    const e = gust.cmS / 100; // m/s toward NED +y, east
    v.pos.y += e * dt;
    v.vel = { ...v.vel, y: v.vel.y + e };
  };
}

module.exports = { parse, install };
