'use strict';
// The fields of the telemetry a vehicle streams, from its state. Units are
// MAVLink's: metres and m/s in LOCAL_POSITION_NED, degE7 and mm in
// GLOBAL_POSITION_INT, cdeg for its heading, mV, cA and % for the battery.
const { REGISTRY } = require('./messages');

const STREAMED = ['ATTITUDE', 'LOCAL_POSITION_NED', 'GLOBAL_POSITION_INT', 'SYS_STATUS',
  'BATTERY_STATUS', 'HOME_POSITION', 'EXTENDED_SYS_STATE', 'POSITION_TARGET_LOCAL_NED', 'HEARTBEAT'];

function nameOf(id) {
  const c = REGISTRY[id];
  return c && STREAMED.includes(c.MSG_NAME) ? c.MSG_NAME : null;
}

const EARTH_R = 6378137;
function metresPerDegLat() { return Math.PI * EARTH_R / 180; }
function metresPerDegLon(lat) { return metresPerDegLat() * Math.cos(lat * Math.PI / 180); }

const MAV_TYPE_QUADROTOR = 2;
const MODE_FLAG = { CUSTOM: 1, GUIDED: 8, STABILIZE: 16, ARMED: 128 };
const MAV_STATE = { STANDBY: 3, ACTIVE: 4 };

function heartbeat(v) {
  const m = v.p.heartbeatMode(v);
  let base = MODE_FLAG.CUSTOM | MODE_FLAG.STABILIZE | m.flags;
  if (v.armed) base |= MODE_FLAG.ARMED;
  return {
    type: MAV_TYPE_QUADROTOR, autopilot: v.p.autopilot, base_mode: base, custom_mode: m.custom,
    system_status: v.p.systemStatus ? v.p.systemStatus(v) : v.armed ? MAV_STATE.ACTIVE : MAV_STATE.STANDBY,
    mavlink_version: 3,
  };
}

function global(v) {
  return {
    lat: Math.round((v.home.lat + v.pos.x / metresPerDegLat()) * 1e7),
    lon: Math.round((v.home.lon + v.pos.y / metresPerDegLon(v.home.lat)) * 1e7),
    alt: Math.round((v.home.alt - v.pos.z) * 1000),
  };
}

function batteryVolts(v) {
  return 4 * (3.5 + 0.7 * v.battery / 100); // a 4S pack
}

const BUILDERS = {
  HEARTBEAT: heartbeat,
  ATTITUDE: (v) => ({ time_boot_ms: v.now(), roll: 0, pitch: 0, yaw: v.yaw, yawspeed: v.yawRate }),
  LOCAL_POSITION_NED: (v) => ({
    time_boot_ms: v.now(), x: v.pos.x, y: v.pos.y, z: v.pos.z + v.opts.originAltM, vx: v.vel.x, vy: v.vel.y, vz: v.vel.z,
  }),
  GLOBAL_POSITION_INT: (v) => {
    const g = global(v);
    const hdg = Math.round(((v.yaw * 180 / Math.PI) + 360) % 360 * 100) % 36000;
    return {
      time_boot_ms: v.now(), lat: g.lat, lon: g.lon, alt: g.alt, relative_alt: Math.round(-v.pos.z * 1000),
      vx: Math.round(v.vel.x * 100), vy: Math.round(v.vel.y * 100), vz: Math.round(v.vel.z * 100), hdg,
    };
  },
  SYS_STATUS: (v) => ({
    voltage_battery: Math.round(batteryVolts(v) * 1000), current_battery: v.armed ? 1500 : 50,
    battery_remaining: Math.floor(v.battery), drop_rate_comm: 0,
  }),
  BATTERY_STATUS: (v) => {
    const cells = new Array(10).fill(65535);
    for (let i = 0; i < 4; i++) cells[i] = Math.round(batteryVolts(v) * 250);
    return {
      id: 0, battery_function: 1, type: 1, temperature: 32767, voltages: cells,
      current_battery: v.armed ? 1500 : 50, current_consumed: -1, energy_consumed: -1,
      battery_remaining: Math.floor(v.battery), voltages_ext: [0, 0, 0, 0],
    };
  },
  HOME_POSITION: (v) => ({
    latitude: Math.round(v.home.lat * 1e7), longitude: Math.round(v.home.lon * 1e7),
    altitude: Math.round(v.home.alt * 1000), x: 0, y: 0, z: 0, q: [1, 0, 0, 0],
  }),
  EXTENDED_SYS_STATE: (v) => ({ vtol_state: 0, landed_state: v.landed }),
  // The target flown now; type_mask 0xFFF (all ignored) when there is none.
  POSITION_TARGET_LOCAL_NED: (v) => {
    const t = v.target;
    if (!t) return { time_boot_ms: v.now(), coordinate_frame: 1, type_mask: 0xfff };
    return {
      time_boot_ms: v.now(), coordinate_frame: 1, x: t.x, y: t.y, z: t.z + v.opts.originAltM,
      yaw: t.yaw === null ? 0 : t.yaw, type_mask: 0xff8 & ~(t.yaw === null ? 0 : 0x400),
    };
  },
};

function fields(v, name) { return BUILDERS[name](v); }

module.exports = { nameOf, fields, heartbeat, metresPerDegLon, STREAMED };
