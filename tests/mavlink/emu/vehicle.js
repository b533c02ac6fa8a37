'use strict';
// One emulated vehicle: its state, a kinematic model (it flies toward its
// target at a few m/s and turns toward the target yaw), the telemetry it
// streams and the handling every autopilot shares (COMMAND_ACK for every
// COMMAND_LONG, arming and the disarm of a vehicle left idle). What PX4 and
// ArduPilot do differently lives in px4.js and ardupilot.js.
const { build, plainFields } = require('./messages');
const telemetry = require('./telemetry');

const RESULT = { ACCEPTED: 0, TEMPORARILY_REJECTED: 1, DENIED: 2, UNSUPPORTED: 3, FAILED: 4 };
const RESULT_NAME = Object.fromEntries(Object.entries(RESULT).map(([k, v]) => [v, k]));
const CMD = {
  NAV_TAKEOFF: 22, NAV_LAND: 21, CONDITION_YAW: 115, DO_SET_MODE: 176,
  COMPONENT_ARM_DISARM: 400, SET_MESSAGE_INTERVAL: 511, REQUEST_MESSAGE: 512,
};
const LANDED = { UNDEFINED: 0, ON_GROUND: 1, IN_AIR: 2, TAKEOFF: 3, LANDING: 4 };
const COMPID = 1;
const GCS_SYSID = 255; // ArduPilot's SYSID_MYGCS: the ground station its GCS failsafe watches
const POSITION_MSGS = ['LOCAL_POSITION_NED', 'GLOBAL_POSITION_INT', 'HOME_POSITION'];

class Vehicle {
  constructor(sysid, index, personality, link, log, opts) {
    this.sysid = sysid;
    this.p = personality;
    this.link = link;
    this.log = log;
    this.opts = opts;
    this.t0 = Date.now();
    this.armed = false;
    this.armedAt = 0;
    this.pos = { x: 0, y: 0, z: 0 };
    this.vel = { x: 0, y: 0, z: 0 };
    this.yaw = 0;
    this.yawRate = 0;
    this.target = null; // {x, y, z, yaw|null} in local NED, or null
    this.control = 'idle'; // idle | position | land | descend
    this.landed = LANDED.ON_GROUND;
    this.groundSince = 0;
    this.battery = opts.battery;
    // Vehicles of one link stand 5 m apart, east of each other.
    this.home = { lat: opts.homeLat, lon: opts.homeLon + index * 5 / telemetry.metresPerDegLon(opts.homeLat), alt: opts.homeAlt };
    this.intervals = new Map(Object.entries(personality.defaultIntervals()));
    this.lastSent = new Map();
    this.lastHeartbeat = 0;
    personality.init(this);
  }

  now() { return Date.now() - this.t0; }
  ready() { return this.now() >= this.opts.bootMs; }
  flying() { return this.armed && this.landed !== LANDED.ON_GROUND; }

  // A state change, with where the vehicle is then (local NED, metres).
  event(what, fields = {}) {
    const pos = { x: +this.pos.x.toFixed(3), y: +this.pos.y.toFixed(3), z: +this.pos.z.toFixed(3) };
    this.log.line('state', { sysid: this.sysid, event: what, ...fields, pos, yaw: +this.yaw.toFixed(3) });
  }

  send(name, fields) {
    this.link.send(this.sysid, COMPID, build(name, fields));
  }

  text(severity, text) {
    this.log.line('text', { sysid: this.sysid, severity, text });
    this.send('STATUSTEXT', { severity, text });
  }

  ack(command, result, peer) {
    this.log.line('ack', { sysid: this.sysid, command, result: RESULT_NAME[result] });
    this.send('COMMAND_ACK', { command, result, target_system: peer.srcsys, target_component: peer.srccomp });
  }

  setMode(name) {
    if (this.modeName === name) return;
    this.modeName = name;
    this.event('mode', { mode: name });
  }

  arm() {
    this.armed = true;
    this.armedAt = this.now();
    this.event('armed');
  }

  disarm(why) {
    if (!this.armed) return;
    this.armed = false;
    this.control = 'idle';
    this.target = null;
    this.vel = { x: 0, y: 0, z: 0 };
    this.event('disarmed', { why });
  }

  // Arming as both autopilots do it: refused before the boot-time checks
  // pass, or always with --refuse-arm; a refusal says why in a STATUSTEXT.
  tryArm() {
    if (this.armed) return RESULT.ACCEPTED;
    const why = this.opts.refuseArm ? this.p.refusalText('refused by the emulator')
      : !this.ready() ? this.p.refusalText(this.p.bootText()) : this.p.armCheck(this);
    if (why) {
      this.text(2, why);
      this.event('arm_refused', { text: why });
      return this.p.armRefusedResult;
    }
    this.arm();
    return RESULT.ACCEPTED;
  }

  // A message addressed to this vehicle (or to all).
  handle(name, msg, peer) {
    this.log.line('recv', { sysid: this.sysid, src: peer.key, srcsys: peer.srcsys, proto: peer.proto, msg: name, fields: plainFields(msg) });
    if (this.link.silent) return;
    if (name === 'HEARTBEAT' && peer.srcsys === GCS_SYSID) this.gcsHeardAt = this.now();
    if (name === 'COMMAND_LONG' || name === 'COMMAND_INT') this.command(msg, peer);
    else if (name === 'SET_MODE') this.p.setModeMessage(this, msg, peer);
    else if (name === 'SET_POSITION_TARGET_LOCAL_NED') this.p.positionTarget(this, msg);
  }

  command(msg, peer) {
    const c = msg.command;
    if (this.opts.noAck.includes(c)) {
      this.event('no_ack', { command: c });
      return;
    }
    if (this.opts.ackFail.includes(c)) {
      this.ack(c, RESULT.FAILED, peer);
      return;
    }
    const params = [msg._param1, msg._param2, msg._param3, msg._param4, msg._param5, msg._param6, msg._param7];
    if (this.opts.ackLost.includes(c)) {
      // Done (now or a while later), but the answer never reaches the
      // ground station: only the vehicle's state tells.
      this.event('ack_lost', { command: c });
      const act = () => this.event('acted', { command: c, result: RESULT_NAME[this.p.command(this, c, params, peer)] });
      if (this.opts.actAfterMs > 0) setTimeout(act, this.opts.actAfterMs);
      else act();
      return;
    }
    let result;
    if (c === CMD.SET_MESSAGE_INTERVAL) result = this.messageInterval(params[0], params[1]);
    else if (c === CMD.REQUEST_MESSAGE) result = this.requestMessage(params[0]);
    else result = this.p.command(this, c, params, peer);
    if (result !== null) this.ack(c, result, peer);
  }

  // MAV_CMD_SET_MESSAGE_INTERVAL: param2 in µs; -1 stops the message, 0
  // asks for its default rate (here 1 Hz). Rates above 50 Hz are capped.
  messageInterval(id, us) {
    const name = telemetry.nameOf(id);
    if (!name) return RESULT.UNSUPPORTED;
    if (this.opts.ignoreFirstInterval.includes(id) && !(this.ignoredOnce ||= new Set()).has(id)) {
      this.ignoredOnce.add(id);
      this.event('interval_ignored', { msg: name });
      return RESULT.ACCEPTED;
    }
    if (us === -1) this.intervals.delete(name);
    else if (us === 0) this.intervals.set(name, 1000);
    else if (us > 0 && Number.isFinite(us)) this.intervals.set(name, Math.max(20, us / 1000));
    else return RESULT.DENIED;
    this.event('interval', { msg: name, ms: this.intervals.get(name) || -1 });
    return RESULT.ACCEPTED;
  }

  requestMessage(id) {
    const name = telemetry.nameOf(id);
    if (!name) return RESULT.UNSUPPORTED;
    this.send(name, telemetry.fields(this, name));
    return RESULT.ACCEPTED;
  }

  tick(dt) {
    this.p.update(this);
    this.idleDisarm();
    this.move(dt);
    this.drain(dt);
    this.stream();
  }

  // Both autopilots disarm a vehicle armed on the ground that does not take
  // off within a delay (ArduPilot DISARM_DELAY, PX4 COM_DISARM_PRFLT: 10 s).
  idleDisarm() {
    if (this.armed && this.landed === LANDED.ON_GROUND &&
        this.now() - Math.max(this.armedAt, this.groundSince) > this.opts.disarmDelayS * 1000) {
      this.text(6, this.p.autoDisarmText);
      this.disarm('idle');
    }
  }

  move(dt) {
    const speed = this.opts.speed;
    const v = { x: 0, y: 0, z: 0 };
    if (this.armed && this.control === 'position' && this.target) {
      const d = { x: this.target.x - this.pos.x, y: this.target.y - this.pos.y, z: this.target.z - this.pos.z };
      const h = Math.hypot(d.x, d.y);
      const hs = Math.min(speed, h / dt);
      if (h > 1e-6) { v.x = d.x / h * hs; v.y = d.y / h * hs; }
      v.z = Math.sign(d.z) * Math.min(this.opts.climb, Math.abs(d.z) / dt);
      const yawTo = this.target.yaw !== null ? this.target.yaw : h > 0.3 ? Math.atan2(d.y, d.x) : this.yaw;
      this.turn(yawTo, dt);
    } else if (this.armed && this.control === 'velocity' && this.velTarget) {
      const t = this.velTarget;
      const h = Math.hypot(t.vx, t.vy);
      const k = h > speed ? speed / h : 1;
      v.x = t.vx * k;
      v.y = t.vy * k;
      v.z = Math.sign(t.vz) * Math.min(this.opts.climb, Math.abs(t.vz));
      this.turn(t.yaw !== null ? t.yaw : h > 0.1 ? Math.atan2(t.vy, t.vx) : this.yaw, dt);
    } else if (this.armed && (this.control === 'land' || this.control === 'descend')) {
      v.z = this.control === 'land' ? 0.7 : 1.0;
    }
    this.vel = v;
    this.pos.x += v.x * dt;
    this.pos.y += v.y * dt;
    this.pos.z += v.z * dt;
    this.ground();
  }

  turn(to, dt) {
    let e = to - this.yaw;
    while (e > Math.PI) e -= 2 * Math.PI;
    while (e < -Math.PI) e += 2 * Math.PI;
    const step = Math.sign(e) * Math.min(Math.abs(e), Math.PI / 2 * dt);
    this.yaw += step;
    while (this.yaw > Math.PI) this.yaw -= 2 * Math.PI;
    while (this.yaw <= -Math.PI) this.yaw += 2 * Math.PI;
    this.yawRate = step / dt;
  }

  // Ground contact: NED z is down, the ground is z = 0 at home.
  ground() {
    if (this.pos.z >= 0) {
      this.pos.z = 0;
      if (this.vel.z > 0) this.vel.z = 0;
      if (this.landed !== LANDED.ON_GROUND && (this.control !== 'position' || !this.target || this.target.z >= 0)) {
        this.setLanded(LANDED.ON_GROUND);
        this.p.touchdown(this);
      }
    } else if (this.pos.z < -0.1 && this.landed === LANDED.ON_GROUND) {
      this.setLanded(LANDED.TAKEOFF);
    } else if (this.landed === LANDED.TAKEOFF && this.target && Math.abs(this.target.z - this.pos.z) < 0.1) {
      this.setLanded(LANDED.IN_AIR);
    }
    if (this.control === 'land' && this.landed !== LANDED.ON_GROUND && this.landed !== LANDED.LANDING) {
      this.setLanded(LANDED.LANDING);
    }
  }

  setLanded(state) {
    this.landed = state;
    if (state === LANDED.ON_GROUND) this.groundSince = this.now();
    this.event('landed_state', { state: Object.keys(LANDED).find((k) => LANDED[k] === state) });
  }

  drain(dt) {
    const perS = this.armed ? this.opts.drainPerS : this.opts.drainPerS / 10;
    this.battery = Math.max(0, this.battery - perS * dt);
  }

  stream() {
    const now = this.now();
    if (now - this.lastHeartbeat >= 1000) {
      this.lastHeartbeat = now;
      this.send('HEARTBEAT', telemetry.heartbeat(this));
    }
    for (const [name, ms] of this.intervals) {
      // Neither autopilot reports a position before its estimator has one.
      if (!this.ready() && POSITION_MSGS.includes(name)) continue;
      const last = this.lastSent.get(name) || -Infinity;
      if (now - last >= ms) {
        this.lastSent.set(name, now);
        this.send(name, telemetry.fields(this, name));
      }
    }
  }
}

module.exports = { Vehicle, RESULT, CMD, LANDED };
