'use strict';
// The MAVLink messages the emulator and the codec vectors speak, by name,
// all taken from node-mavlink (its generated definitions, CRC_EXTRAs and
// serializer): nothing here encodes a field by hand.
const mav = require('node-mavlink');

const REGISTRY = { ...mav.minimal.REGISTRY, ...mav.common.REGISTRY };

function classOf(name) {
  for (const id of Object.keys(REGISTRY)) {
    if (REGISTRY[id].MSG_NAME === name) return REGISTRY[id];
  }
  throw new Error('unknown message ' + name);
}

// A plain object of a message's fields by their MAVLink (snake_case) names,
// for logs and JSON: bigints become numbers, NaN and infinities strings.
function plainFields(msg) {
  const out = {};
  for (const f of msg.constructor.FIELDS) {
    out[f.source] = plainValue(msg[f.name]);
  }
  return out;
}

function plainValue(v) {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plainValue);
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

// Builds a message of class NAME from FIELDS given by MAVLink names
// (snake_case); unnamed fields are zero (arrays: zeros, strings: empty).
function build(name, fields = {}) {
  const Clazz = classOf(name);
  const msg = new Clazz();
  for (const f of Clazz.FIELDS) {
    let v = fields[f.source];
    if (v === undefined) {
      if (f.type.endsWith('[]')) v = f.type === 'char[]' ? '' : new Array(f.length).fill(0);
      else if (f.type === 'uint64_t' || f.type === 'int64_t') v = 0n;
      else v = 0;
    }
    if ((f.type === 'uint64_t' || f.type === 'int64_t') && typeof v === 'number') v = BigInt(v);
    msg[f.name] = v;
  }
  return msg;
}

// Decodes a packet from node-mavlink's parser; null for a message that is
// not in the registry.
function decode(packet) {
  const Clazz = REGISTRY[packet.header.msgid];
  if (!Clazz) return null;
  return packet.protocol.data(packet.payload, Clazz);
}

module.exports = { mav, REGISTRY, classOf, plainFields, plainValue, build, decode };
