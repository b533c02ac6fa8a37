'use strict';
// PX4's behaviour as its documentation gives it: custom_mode packs the main
// mode in bits 16-23 and the sub mode (of AUTO) in bits 24-31; offboard is
// refused unless setpoints have been streaming above 2 Hz for about a
// second, and left for Hold when they stop for COM_OF_LOSS_T (1 s by
// default); manual modes are refused with no RC; takeoff by a setpoint in
// offboard or by MAV_CMD_NAV_TAKEOFF (AUTO.TAKEOFF, then Hold); landing
// disarms.
const { RESULT, CMD, LANDED } = require('./vehicle');
const { parseTarget } = require('./targets');

const MAIN = { MANUAL: 1, ALTCTL: 2, POSCTL: 3, AUTO: 4, ACRO: 5, OFFBOARD: 6, STABILIZED: 7 };
const SUB = { READY: 1, TAKEOFF: 2, LOITER: 3, MISSION: 4, RTL: 5, LAND: 6 };
const NAMES = { 1: 'MANUAL', 2: 'ALTCTL', 3: 'POSCTL', 5: 'ACRO', 6: 'OFFBOARD', 7: 'STABILIZED' };
const SUB_NAMES = { 1: 'AUTO.READY', 2: 'AUTO.TAKEOFF', 3: 'AUTO.LOITER', 4: 'AUTO.MISSION', 5: 'AUTO.RTL', 6: 'AUTO.LAND' };
const TAKEOFF_ALT_M = 2.5; // MIS_TAKEOFF_ALT's default

function modeName(main, sub) {
  return main === MAIN.AUTO ? SUB_NAMES[sub] || 'AUTO.' + sub : NAMES[main] || 'MAIN.' + main;
}

const px4 = {
  name: 'px4',
  autopilot: 12, // MAV_AUTOPILOT_PX4
  armRefusedResult: RESULT.TEMPORARILY_REJECTED,
  autoDisarmText: 'Disarmed by auto preflight disarming',

  init(v) {
    v.sp = null;
    v.spLast = -Infinity;
    v.spStart = -Infinity;
    v.disarmAt = null;
    this.enter(v, MAIN.AUTO, SUB.LOITER);
  },

  defaultIntervals() {
    return {
      ATTITUDE: 100, LOCAL_POSITION_NED: 100, GLOBAL_POSITION_INT: 200, SYS_STATUS: 1000,
      BATTERY_STATUS: 1000, HOME_POSITION: 2000, EXTENDED_SYS_STATE: 1000, POSITION_TARGET_LOCAL_NED: 200,
    };
  },

  heartbeatMode(v) {
    const flags = v.main === MAIN.OFFBOARD ? 8 : v.main === MAIN.AUTO ? 4 | 8 : 0;
    return { custom: (v.main << 16) | ((v.main === MAIN.AUTO ? v.sub : 0) << 24), flags };
  },

  refusalText(why) { return 'Preflight Fail: ' + why; },
  bootText() { return 'ekf2 missing data'; },
  armCheck(v) {
    if (v.main === MAIN.OFFBOARD && !this.streaming(v)) return 'Arming denied: no offboard signal';
    return null;
  },

  // Setpoints above 2 Hz for about a second: none missing for 0.5 s and
  // the first of the stream a second old.
  streaming(v) {
    const now = v.now();
    return now - v.spLast < v.opts.offboardLossMs && now - v.spStart >= 1000;
  },

  enter(v, main, sub) {
    v.main = main;
    v.sub = sub;
    v.setMode(modeName(main, sub));
    if (main === MAIN.OFFBOARD) this.follow(v);
    else if (main === MAIN.AUTO && sub === SUB.LOITER) this.hold(v);
    else if (main === MAIN.AUTO && sub === SUB.LAND) v.control = 'land';
    else if (main === MAIN.AUTO && sub === SUB.TAKEOFF) {
      v.control = 'position';
      v.target = { x: v.pos.x, y: v.pos.y, z: -v.takeoffAlt, yaw: v.yaw };
    } else if (main === MAIN.AUTO && sub === SUB.RTL) {
      v.control = 'position';
      v.target = { x: 0, y: 0, z: Math.min(v.pos.z, -TAKEOFF_ALT_M), yaw: null };
    }
  },

  hold(v) {
    if (v.flying()) {
      v.control = 'position';
      v.target = { x: v.pos.x, y: v.pos.y, z: v.pos.z, yaw: v.yaw };
    } else {
      v.control = 'idle';
      v.target = null;
    }
  },

  follow(v) {
    if (!v.sp) return;
    if (v.sp.kind === 'vel') {
      v.control = 'velocity';
      v.velTarget = v.sp;
      v.target = null;
    } else {
      v.control = 'position';
      v.target = { x: v.sp.x, y: v.sp.y, z: v.sp.z, yaw: v.sp.yaw === null ? v.yaw : v.sp.yaw };
    }
    // On the ground a setpoint below it just keeps the vehicle there.
    if (v.target && !v.armed) v.control = 'idle';
  },

  // Returns the COMMAND_ACK result of a switch to MAIN/SUB.
  switchTo(v, main, sub) {
    if (main === MAIN.OFFBOARD && !this.streaming(v)) {
      v.text(2, 'Switching to Offboard is currently not available');
      v.event('mode_refused', { mode: 'OFFBOARD', why: 'no setpoint stream' });
      return RESULT.TEMPORARILY_REJECTED;
    }
    if (main !== MAIN.OFFBOARD && main !== MAIN.AUTO) {
      // No RC: PX4 will not enter a mode that needs sticks.
      v.text(2, 'Switching to ' + modeName(main, sub) + ' is currently not available');
      v.event('mode_refused', { mode: modeName(main, sub), why: 'no RC' });
      return RESULT.TEMPORARILY_REJECTED;
    }
    if (main === MAIN.AUTO && !SUB_NAMES[sub]) return RESULT.DENIED;
    if (main === MAIN.AUTO && sub === SUB.TAKEOFF) v.takeoffAlt = TAKEOFF_ALT_M;
    this.enter(v, main, sub);
    return RESULT.ACCEPTED;
  },

  setModeMessage(v, msg) {
    const c = msg.customMode >>> 0;
    this.switchTo(v, (c >>> 16) & 0xff, (c >>> 24) & 0xff);
  },

  command(v, c, p) {
    if (c === CMD.DO_SET_MODE) {
      if (!(p[0] & 1)) return RESULT.DENIED;
      return this.switchTo(v, p[1], p[2]);
    }
    if (c === CMD.COMPONENT_ARM_DISARM) {
      if (p[0] === 1) return v.tryArm();
      if (p[0] !== 0) return RESULT.DENIED;
      if (v.flying()) {
        v.text(2, 'Disarming denied: not landed');
        return RESULT.TEMPORARILY_REJECTED;
      }
      v.disarm('command');
      return RESULT.ACCEPTED;
    }
    if (c === CMD.NAV_TAKEOFF) {
      if (!v.armed) {
        v.text(2, 'Takeoff denied: disarmed');
        return RESULT.TEMPORARILY_REJECTED;
      }
      // param7 is an altitude above mean sea level; NaN means the default.
      v.takeoffAlt = Number.isFinite(p[6]) ? p[6] - v.home.alt : TAKEOFF_ALT_M;
      if (!(v.takeoffAlt > 0)) return RESULT.DENIED;
      this.enter(v, MAIN.AUTO, SUB.TAKEOFF);
      return RESULT.ACCEPTED;
    }
    if (c === CMD.NAV_LAND) {
      this.enter(v, MAIN.AUTO, SUB.LAND);
      return RESULT.ACCEPTED;
    }
    return RESULT.UNSUPPORTED;
  },

  // PX4 takes setpoints in any mode (they are the offboard signal) but
  // flies them only in offboard.
  positionTarget(v, msg) {
    const t = parseTarget(v, msg);
    if (t.error) {
      v.event('target_rejected', { why: t.error });
      return;
    }
    const now = v.now();
    if (now - v.spLast >= v.opts.offboardLossMs) v.spStart = now;
    v.spLast = now;
    v.sp = t;
    if (v.main === MAIN.OFFBOARD) this.follow(v);
  },

  update(v) {
    const now = v.now();
    if (v.main === MAIN.OFFBOARD && now - v.spLast > v.opts.offboardLossMs) {
      v.text(4, 'Failsafe: offboard signal lost, holding');
      v.event('offboard_lost');
      this.enter(v, MAIN.AUTO, SUB.LOITER);
    }
    if (v.main === MAIN.OFFBOARD && v.control === 'idle' && v.armed && v.target) v.control = 'position';
    if (v.main === MAIN.AUTO && v.sub === SUB.TAKEOFF && v.target && Math.abs(v.pos.z - v.target.z) < 0.1) {
      this.enter(v, MAIN.AUTO, SUB.LOITER);
    }
    if (v.main === MAIN.AUTO && v.sub === SUB.RTL && v.target && Math.hypot(v.pos.x, v.pos.y) < 0.2) {
      this.enter(v, MAIN.AUTO, SUB.LAND);
    }
    if (v.disarmAt !== null && now >= v.disarmAt) {
      v.disarmAt = null;
      v.disarm('landed');
    }
  },

  // Landing detected: PX4 disarms shortly after (COM_DISARM_LAND).
  touchdown(v) {
    if (v.armed) v.disarmAt = v.now() + 1000;
    if (v.main === MAIN.AUTO && v.sub === SUB.LAND) v.control = 'idle';
  },
};

module.exports = px4;
