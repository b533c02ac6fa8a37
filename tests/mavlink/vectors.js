#!/usr/bin/env node
'use strict';
// Codec vectors from node-mavlink, an implementation of MAVLink that is not
// aloft's, for aloft's codec tests:
//   vectors.js [--out FILE]  writes JSON: each message the driver uses (id,
//       CRC_EXTRA, lengths, field layout) and frames node-mavlink encodes
//       (MAVLink 2 with and without trailing-zero truncation, MAVLink 1),
//       each with the fields node-mavlink decodes from it.
//   vectors.js --decode  reads one frame a line in hex on stdin, prints one
//       JSON line each: {"ok":true,"msg":...,"fields":{...}} or
//       {"ok":false,"error":"crc"|"unknown"|"incomplete"|"hex"}.
const fs = require('fs');
const { mav, classOf, build, plainFields, decode } = require('./emu/messages');

const MESSAGES = ['HEARTBEAT', 'SYS_STATUS', 'BATTERY_STATUS', 'ATTITUDE', 'LOCAL_POSITION_NED',
  'GLOBAL_POSITION_INT', 'HOME_POSITION', 'EXTENDED_SYS_STATE', 'COMMAND_LONG', 'COMMAND_ACK',
  'SET_MODE', 'SET_POSITION_TARGET_LOCAL_NED', 'POSITION_TARGET_LOCAL_NED', 'STATUSTEXT'];

// Per message: a sample with every field set (negatives, fractions, full
// arrays) and one whose last fields are zero, which MAVLink 2 truncates.
const SAMPLES = {
  HEARTBEAT: [
    { custom_mode: 0x06040000, type: 2, autopilot: 12, base_mode: 0x9d, system_status: 4, mavlink_version: 3 },
    { custom_mode: 4, type: 2, autopilot: 3, base_mode: 0, system_status: 0, mavlink_version: 0 },
  ],
  SYS_STATUS: [
    { onboard_control_sensors_present: 0x12345678, voltage_battery: 15234, current_battery: -1, battery_remaining: 87, load: 500, drop_rate_comm: 3, errors_comm: 7, onboard_control_sensors_health_extended: 1 },
    { voltage_battery: 11100, current_battery: 250, battery_remaining: -1 },
  ],
  BATTERY_STATUS: [
    { id: 1, battery_function: 1, type: 1, temperature: 2512, voltages: [3801, 3802, 3803, 3804, 65535, 65535, 65535, 65535, 65535, 65535], current_battery: 1520, current_consumed: 1234, energy_consumed: -1, battery_remaining: 64, time_remaining: 600, charge_state: 1, voltages_ext: [1, 2, 3, 4], mode: 0, fault_bitmask: 0x100 },
    { voltages: [4200, 0, 0, 0, 0, 0, 0, 0, 0, 0], battery_remaining: 100 },
  ],
  ATTITUDE: [
    { time_boot_ms: 123456, roll: 0.0125, pitch: -0.25, yaw: -3.1, rollspeed: 0.5, pitchspeed: -0.5, yawspeed: 1.25 },
    { time_boot_ms: 1, yaw: 1.5 },
  ],
  LOCAL_POSITION_NED: [
    { time_boot_ms: 4000000000, x: 12.5, y: -3.25, z: -10.125, vx: 1.5, vy: -0.5, vz: 0.25 },
    { time_boot_ms: 10, x: 1 },
  ],
  GLOBAL_POSITION_INT: [
    { time_boot_ms: 99, lat: -353632620, lon: 1491652370, alt: 584123, relative_alt: 10250, vx: -150, vy: 25, vz: -3, hdg: 35999 },
    { time_boot_ms: 5, lat: 473977420, lon: 85455940, alt: 488000, relative_alt: 0, hdg: 0 },
  ],
  HOME_POSITION: [
    { latitude: 473977420, longitude: 85455940, altitude: 488000, x: 0.5, y: -0.5, z: 0.125, q: [1, 0, 0, 0], approach_x: 1, approach_y: 2, approach_z: -3, time_usec: 1234567890123 },
    { latitude: -353632620, longitude: 1491652370, altitude: 584000, q: [1, 0, 0, 0] },
  ],
  EXTENDED_SYS_STATE: [{ vtol_state: 0, landed_state: 2 }, { vtol_state: 0, landed_state: 0 }],
  COMMAND_LONG: [
    { target_system: 1, target_component: 1, command: 176, confirmation: 0, param1: 1, param2: 6, param3: 0, param4: NaN, param5: NaN, param6: -1.5, param7: 0 },
    { target_system: 2, target_component: 0, command: 400, confirmation: 0, param1: 1 },
    { target_system: 1, target_component: 1, command: 511, param1: 32, param2: 100000 },
    { target_system: 1, target_component: 1, command: 22, param7: 2.5 },
  ],
  COMMAND_ACK: [
    { command: 400, result: 4, progress: 0, result_param2: 0, target_system: 255, target_component: 190 },
    { command: 176, result: 0 },
  ],
  SET_MODE: [{ target_system: 1, base_mode: 1, custom_mode: 4 }, { target_system: 3, base_mode: 0, custom_mode: 0x00060000 }],
  SET_POSITION_TARGET_LOCAL_NED: [
    { time_boot_ms: 777, target_system: 1, target_component: 1, coordinate_frame: 1, type_mask: 0x9f8, x: 1.5, y: -2.25, z: -3, yaw: 1.5707963, yaw_rate: 0, vx: 0, vy: 0, vz: 0, afx: 0, afy: 0, afz: 0 },
    { target_system: 1, target_component: 0, coordinate_frame: 1, type_mask: 0xdf8, x: 0, y: 0, z: -1 },
    { target_system: 1, target_component: 0, coordinate_frame: 0, type_mask: 0, x: 0, y: 0, z: -1 },
  ],
  POSITION_TARGET_LOCAL_NED: [
    { time_boot_ms: 55, coordinate_frame: 1, type_mask: 0x9f8, x: -4, y: 5.5, z: -2.5, vx: 0.5, vy: 0, vz: 0, yaw: -0.75, yaw_rate: 0.1 },
    { time_boot_ms: 0, coordinate_frame: 1, type_mask: 0xfff },
    { time_boot_ms: 9, coordinate_frame: 0, type_mask: 0, x: 1 },
  ],
  STATUSTEXT: [
    { severity: 2, text: 'PreArm: Need Position Estimate', id: 0, chunk_seq: 0 },
    // 50 characters exactly: no terminating NUL in the frame.
    { severity: 6, text: '01234567890123456789012345678901234567890123456789', id: 7, chunk_seq: 1 },
  ],
};

const V1 = mav.MavLinkProtocolV1;
const V2 = mav.MavLinkProtocolV2;
const CRC_LEN = 2;

function baseLength(Clazz) {
  return Clazz.FIELDS.filter((f) => !f.extension).reduce((n, f) => n + f.size * Math.max(1, f.length), 0);
}

function recrc(frame, Clazz) {
  frame.writeUInt16LE(mav.x25crc(frame, 1, CRC_LEN, Clazz.MAGIC_NUMBER), frame.length - CRC_LEN);
  return frame;
}

// The three encodings of MSG: node-mavlink's MAVLink 2 (trailing zeros
// truncated); the same with the full payload; MAVLink 1, which carries no
// extension fields, for the messages whose id fits its one byte.
function encodings(msg, sysid, compid, seq) {
  const Clazz = msg.constructor;
  const out = [];
  const v2 = new V2(sysid, compid).serialize(msg, seq);
  out.push({ proto: 2, truncated: v2[1] < Clazz.PAYLOAD_LENGTH, frame: v2 });
  if (v2[1] < Clazz.PAYLOAD_LENGTH) {
    const full = Buffer.alloc(V2.PAYLOAD_OFFSET + Clazz.PAYLOAD_LENGTH + CRC_LEN);
    v2.copy(full, 0, 0, v2.length - CRC_LEN);
    full[1] = Clazz.PAYLOAD_LENGTH;
    out.push({ proto: 2, truncated: false, frame: recrc(full, Clazz) });
  }
  if (Clazz.MSG_ID < 256) {
    const whole = new V1(sysid, compid).serialize(msg, seq);
    const n = baseLength(Clazz);
    const v1 = Buffer.alloc(V1.PAYLOAD_OFFSET + n + CRC_LEN);
    whole.copy(v1, 0, 0, V1.PAYLOAD_OFFSET + n);
    v1[1] = n;
    out.push({ proto: 1, truncated: false, frame: recrc(v1, Clazz) });
  }
  return out;
}

// node-mavlink's own reading of FRAME: its splitter (magic, length, CRC)
// and parser, as a receiver would run them.
function parseFrame(frame) {
  return new Promise((resolve) => {
    const splitter = new mav.MavLinkPacketSplitter({}, { onCrcError: () => resolve({ ok: false, error: 'crc' }) });
    const parser = splitter.pipe(new mav.MavLinkPacketParser());
    let got = null;
    parser.on('data', (p) => { got = p; });
    parser.on('end', () => {
      if (!got) return resolve({ ok: false, error: splitter.unknownPackagesCount ? 'unknown' : splitter.invalidPackages ? 'crc' : 'incomplete' });
      const msg = decode(got);
      if (!msg) return resolve({ ok: false, error: 'unknown' });
      resolve({
        ok: true, msg: msg.constructor.MSG_NAME, proto: got.protocol instanceof V1 ? 1 : 2,
        sysid: got.header.sysid, compid: got.header.compid, seq: got.header.seq,
        len: got.header.payloadLength, fields: plainFields(msg),
      });
    });
    splitter.end(frame);
  });
}

function layout(Clazz) {
  return {
    id: Clazz.MSG_ID, crc_extra: Clazz.MAGIC_NUMBER, min_len: baseLength(Clazz), max_len: Clazz.PAYLOAD_LENGTH,
    fields: Clazz.FIELDS.map((f) => ({
      name: f.source, type: f.type.replace('_mavlink_version', ''), offset: f.offset, extension: f.extension, ...(f.length ? { length: f.length } : {}),
    })),
  };
}

async function generate(outFile) {
  const doc = { generator: 'node-mavlink ' + require('node-mavlink/package.json').version, messages: {}, frames: [] };
  let seq = 0;
  for (const name of MESSAGES) {
    const Clazz = classOf(name);
    doc.messages[name] = layout(Clazz);
    for (const sample of SAMPLES[name]) {
      const sysid = 1 + (seq % 3), compid = seq % 2 ? 190 : 1;
      for (const e of encodings(build(name, sample), sysid, compid, seq & 255)) {
        const d = await parseFrame(e.frame);
        if (!d.ok) throw new Error(`node-mavlink rejects its own ${name} frame: ${d.error}`);
        doc.frames.push({ msg: name, proto: e.proto, truncated: e.truncated, sysid, compid, seq: seq & 255, hex: e.frame.toString('hex'), fields: d.fields });
      }
      seq++;
    }
  }
  const text = JSON.stringify(doc) + '\n';
  if (outFile) fs.writeFileSync(outFile, text);
  else process.stdout.write(text);
}

async function decodeLines() {
  const lines = fs.readFileSync(0, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l);
  for (const l of lines) {
    const r = /^([0-9a-fA-F]{2})+$/.test(l) ? await parseFrame(Buffer.from(l, 'hex')) : { ok: false, error: 'hex' };
    process.stdout.write(JSON.stringify(r) + '\n');
  }
}

const argv = process.argv.slice(2);
const run = argv[0] === '--decode' ? decodeLines() : generate(argv[0] === '--out' ? argv[1] : null);
run.catch((e) => { process.stderr.write('vectors: ' + e.message + '\n'); process.exit(1); });
