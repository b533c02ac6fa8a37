'use strict';
// ArduCopter's behaviour as its documentation gives it: custom_mode is the
// flight mode number (GUIDED 4, LAND 9, ...); no telemetry stream until a
// ground station asks (MAV_CMD_SET_MESSAGE_INTERVAL); arming refused with
// "PreArm: ..." STATUSTEXTs until the position estimate is ready; GUIDED
// needs a position; MAV_CMD_NAV_TAKEOFF needs GUIDED and armed; position
// targets outside GUIDED are ignored without an answer, one it cannot use
// (frame, type_mask) stops the vehicle where it is, and one without a
// yaw turns the vehicle toward its direction of travel; the modes that want
// a pilot's throttle (STABILIZE, ALT_HOLD, LOITER, POSHOLD) descend with no
// RC; LAND ends on the ground with a disarm.
const { RESULT, CMD } = require('./vehicle');
const { parseTarget } = require('./targets');

const MODE = { STABILIZE: 0, ACRO: 1, ALT_HOLD: 2, AUTO: 3, GUIDED: 4, LOITER: 5, RTL: 6, CIRCLE: 7, LAND: 9, POSHOLD: 16, BRAKE: 17 };
const MODE_NAME = Object.fromEntries(Object.entries(MODE).map(([k, n]) => [n, k]));
const STICK_MODES = [MODE.STABILIZE, MODE.ACRO, MODE.ALT_HOLD, MODE.LOITER, MODE.POSHOLD, MODE.CIRCLE];
const GUIDED_FLAG_MODES = [MODE.AUTO, MODE.GUIDED, MODE.LOITER, MODE.RTL, MODE.CIRCLE, MODE.POSHOLD, MODE.BRAKE];
const SET_MODE_MSG_ID = 11; // ArduPilot acknowledges SET_MODE with this command id
const PREARM_EVERY_MS = 5000;
const RTL_ALT_M = 15;

const ardupilot = {
  name: 'ardupilot',
  autopilot: 3, // MAV_AUTOPILOT_ARDUPILOTMEGA
  armRefusedResult: RESULT.FAILED,
  autoDisarmText: 'Disarming motors',

  init(v) {
    v.mode = MODE.STABILIZE;
    v.setMode('STABILIZE');
    v.lastPrearm = -Infinity;
  },

  defaultIntervals() { return {}; },

  // base_mode as ArduCopter fills it: MANUAL_INPUT always, GUIDED_ENABLED
  // in the modes that fly to a position of their own (never AUTO_ENABLED).
  heartbeatMode(v) {
    const flags = 64 | (GUIDED_FLAG_MODES.includes(v.mode) ? 8 : 0);
    return { custom: v.mode, flags };
  },

  // MAV_STATE: STANDBY while landed, ACTIVE in the air.
  systemStatus(v) { return v.flying() ? 4 : 3; },

  refusalText(why) { return 'PreArm: ' + why; },
  bootText() { return 'Need Position Estimate'; },
  armCheck(v) { return this.positionOk(v) ? null : 'PreArm: Need Position Estimate'; },

  // A position good enough to fly on comes a while after the EKF origin
  // (LOCAL_POSITION_NED streams from the origin on).
  positionOk(v) { return v.now() >= v.opts.bootMs + v.opts.positionOkMs; },

  // Returns the COMMAND_ACK result of a switch to mode N.
  switchTo(v, n) {
    if (MODE_NAME[n] === undefined) return RESULT.FAILED;
    if ((n === MODE.GUIDED || n === MODE.LOITER || n === MODE.RTL || n === MODE.AUTO) && !this.positionOk(v)) {
      v.text(4, 'Mode change failed: ' + MODE_NAME[n] + ' requires position');
      v.event('mode_refused', { mode: MODE_NAME[n], why: 'no position' });
      return RESULT.FAILED;
    }
    v.mode = n;
    v.setMode(MODE_NAME[n]);
    if (n === MODE.LAND) {
      if (v.flying()) v.control = 'land';
      else v.disarm('land mode on the ground');
    } else if (n === MODE.GUIDED || n === MODE.BRAKE) {
      if (v.flying()) {
        v.control = 'position';
        v.target = { x: v.pos.x, y: v.pos.y, z: v.pos.z, yaw: v.yaw };
      }
    } else if (n === MODE.RTL) {
      if (v.flying()) {
        v.control = 'position';
        v.target = { x: 0, y: 0, z: Math.min(v.pos.z, -RTL_ALT_M), yaw: null };
      }
    } else if (STICK_MODES.includes(n) && v.flying()) {
      // No RC: the throttle stick reads low and the vehicle sinks.
      v.control = 'descend';
      v.event('descending', { why: MODE_NAME[n] + ' with no RC throttle' });
    }
    return RESULT.ACCEPTED;
  },

  setModeMessage(v, msg, peer) {
    v.ack(SET_MODE_MSG_ID, this.switchTo(v, msg.customMode >>> 0), peer);
  },

  command(v, c, p) {
    if (c === CMD.DO_SET_MODE) {
      if (!(p[0] & 1)) return RESULT.FAILED;
      return this.switchTo(v, p[1]);
    }
    if (c === CMD.COMPONENT_ARM_DISARM) {
      if (p[0] === 1) return v.tryArm();
      if (p[0] !== 0) return RESULT.FAILED;
      if (v.flying()) {
        v.text(3, 'Disarm: not landed');
        return RESULT.FAILED;
      }
      v.disarm('command');
      return RESULT.ACCEPTED;
    }
    if (c === CMD.NAV_TAKEOFF) return this.takeoff(v, p[6]);
    if (c === CMD.NAV_LAND) return this.switchTo(v, MODE.LAND);
    if (c === CMD.CONDITION_YAW) return this.conditionYaw(v, p);
    return RESULT.UNSUPPORTED;
  },

  // param7: the altitude above home, metres (frame GLOBAL_RELATIVE_ALT);
  // refused below the vehicle's own height ("can't takeoff downwards").
  takeoff(v, alt) {
    if (v.mode !== MODE.GUIDED || !v.armed || v.flying() || !(alt > -v.pos.z) || !Number.isFinite(alt)) {
      v.event('takeoff_refused', { mode: MODE_NAME[v.mode], armed: v.armed, alt });
      return RESULT.FAILED;
    }
    v.control = 'position';
    v.target = { x: v.pos.x, y: v.pos.y, z: -alt, yaw: v.yaw };
    return RESULT.ACCEPTED;
  },

  // param1 angle (deg), param3 direction (-1 ccw, 1 cw), param4 1 relative.
  conditionYaw(v, p) {
    if (v.mode !== MODE.GUIDED || !v.flying() || !v.target || !Number.isFinite(p[0])) return RESULT.FAILED;
    const a = p[0] * Math.PI / 180;
    v.target.yaw = p[3] === 1 ? v.yaw + (p[2] < 0 ? -a : a) : a;
    return RESULT.ACCEPTED;
  },

  positionTarget(v, msg) {
    if (v.mode !== MODE.GUIDED) {
      v.event('target_ignored', { why: 'mode ' + MODE_NAME[v.mode] });
      return;
    }
    if (!v.flying()) {
      // On the ground a target replaces a takeoff not yet off the ground,
      // and the vehicle stays down (ArduCopter's landed GUIDED holds the
      // motors at idle): it then disarms by itself.
      if (v.control === 'position') {
        v.control = 'idle';
        v.target = null;
        v.event('takeoff_replaced');
      }
      v.event('target_ignored', { why: 'not flying' });
      return;
    }
    const t = parseTarget(v, msg);
    if (t.error) {
      // ArduCopter answers a target it cannot use (frame, type_mask, a
      // velocity that is not a number) by stopping where it is.
      v.event('target_rejected', { why: t.error });
      v.control = 'position';
      v.target = { x: v.pos.x, y: v.pos.y, z: v.pos.z, yaw: v.yaw };
      return;
    }
    // In the body frames the yaw is relative to the heading.
    if (t.yaw !== null && (msg.coordinateFrame === 8 || msg.coordinateFrame === 9)) t.yaw += v.yaw;
    if (t.kind === 'vel') {
      v.control = 'velocity';
      v.velTarget = t;
      v.target = null;
      return;
    }
    v.control = 'position';
    v.target = { x: t.x, y: t.y, z: t.z, yaw: t.yaw };
  },

  update(v) {
    const now = v.now();
    if (!this.positionOk(v) && !v.armed && now - v.lastPrearm >= PREARM_EVERY_MS) {
      v.lastPrearm = now;
      v.text(2, 'PreArm: ' + this.bootText());
    }
    // FS_GCS_ENABLE 1 (off by default, as here without --fs-gcs-s): RTL
    // when the ground station's HEARTBEAT stops for FS_GCS_TIMEOUT.
    const fs = v.opts.fsGcsS;
    if (fs !== null && v.flying() && v.gcsHeardAt !== undefined && now - v.gcsHeardAt > fs * 1000 &&
        v.mode !== MODE.RTL && v.mode !== MODE.LAND) {
      v.text(2, 'GCS Failsafe');
      v.event('gcs_failsafe');
      this.switchTo(v, MODE.RTL);
    }
    if (v.mode === MODE.RTL && v.flying() && v.control === 'position' && Math.hypot(v.pos.x, v.pos.y) < 0.2) {
      this.switchTo(v, MODE.LAND);
    }
  },

  touchdown(v) {
    if (v.mode === MODE.LAND && v.armed) {
      v.text(6, 'Disarming motors');
      v.disarm('landed');
    }
  },
};

module.exports = ardupilot;
