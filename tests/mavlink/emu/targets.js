'use strict';
// SET_POSITION_TARGET_LOCAL_NED to a target in the vehicle's local NED
// frame. type_mask bits (POSITION_TARGET_TYPEMASK): 1, 2, 4 ignore x, y, z;
// 8, 16, 32 ignore vx, vy, vz; 1024 ignores yaw. Frames: 1 LOCAL_NED
// (absolute), 7 LOCAL_OFFSET_NED (from the current position), 8 BODY_NED and
// 9 BODY_OFFSET_NED (from the current position, rotated by the heading).
const FRAME = { LOCAL_NED: 1, LOCAL_OFFSET_NED: 7, BODY_NED: 8, BODY_OFFSET_NED: 9 };

function parseTarget(v, msg) {
  const m = msg.typeMask;
  const usePos = (m & 7) === 0;
  const useVel = !usePos && (m & 0x38) === 0;
  const yaw = m & 0x400 ? null : msg.yaw;
  if (!usePos && !useVel) return { error: 'no position or velocity in type_mask ' + m };
  const a = usePos ? [msg.x, msg.y, msg.z] : [msg.vx, msg.vy, msg.vz];
  if (!a.every(Number.isFinite) || (yaw !== null && !Number.isFinite(yaw))) {
    return { error: 'a field is not finite' };
  }
  const f = msg.coordinateFrame;
  let [x, y, z] = a;
  if (f === FRAME.BODY_NED || f === FRAME.BODY_OFFSET_NED) {
    const c = Math.cos(v.yaw), s = Math.sin(v.yaw);
    [x, y] = [c * x - s * y, s * x + c * y];
  } else if (f !== FRAME.LOCAL_NED && f !== FRAME.LOCAL_OFFSET_NED) {
    return { error: 'frame ' + f + ' not supported' };
  }
  if (useVel) return { kind: 'vel', vx: x, vy: y, vz: z, yaw };
  if (f !== FRAME.LOCAL_NED) { x += v.pos.x; y += v.pos.y; z += v.pos.z; } else z -= v.opts.originAltM;
  return { kind: 'pos', x, y, z, yaw };
}

module.exports = { parseTarget };
