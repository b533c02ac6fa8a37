#!/usr/bin/env node
'use strict';
// A scripted ground station on node-mavlink, to test the vehicle emulator
// with a MAVLink peer that is not aloft. It runs the steps of a JSON script
// (argument or stdin) and prints one JSON line per message received
// ({"kind":"recv",...}) and per step done ({"kind":"step",...}); it sends a
// HEARTBEAT at 1 Hz as a ground station does.
//
// usage: gcs_script.js (--connect HOST:PORT | --listen PORT) [--sysid N] [SCRIPT]
// Steps:
//   {"do":"send","msg":"COMMAND_LONG","fields":{...},"proto":1|2}
//   {"do":"wait","ms":N}
//   {"do":"await","msg":"COMMAND_ACK","where":{"command":400},"sysid":1,"timeout_ms":N}
//   {"do":"stream","msg":"SET_POSITION_TARGET_LOCAL_NED","hz":5,"fields":{...}}
//   {"do":"stream_stop"}
const dgram = require('dgram');
const fs = require('fs');
const { mav, build, decode, plainFields } = require('./emu/messages');

function parse(argv) {
  const o = { connect: null, listen: null, sysid: 255, script: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--connect') {
      const [h, p] = argv[++i].split(':');
      o.connect = { host: h, port: Number(p) };
    } else if (a === '--listen') o.listen = Number(argv[++i]);
    else if (a === '--sysid') o.sysid = Number(argv[++i]);
    else o.script = a;
  }
  if (!o.connect && o.listen === null) throw new Error('give --connect HOST:PORT or --listen PORT');
  return o;
}

const t0 = Date.now();
function out(kind, fields) {
  process.stdout.write(JSON.stringify({ kind, t: (Date.now() - t0) / 1000, ...fields }) + '\n');
}

function matches(fields, where) {
  return Object.entries(where || {}).every(([k, v]) => fields[k] === v);
}

async function main() {
  const o = parse(process.argv.slice(2));
  const script = JSON.parse(o.script || fs.readFileSync(0, 'utf8'));
  const sock = dgram.createSocket('udp4');
  let dest = o.connect;
  let seq = 0;
  const waiters = [];
  const splitter = new mav.MavLinkPacketSplitter();
  splitter.pipe(new mav.MavLinkPacketParser()).on('data', (packet) => {
    const msg = decode(packet);
    if (!msg) return;
    const rec = { sysid: packet.header.sysid, msg: msg.constructor.MSG_NAME, fields: plainFields(msg) };
    out('recv', rec);
    for (const w of waiters.slice()) {
      if (w.msg === rec.msg && (w.sysid === undefined || w.sysid === rec.sysid) && matches(rec.fields, w.where)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(rec);
      }
    }
  });
  sock.on('message', (buf, rinfo) => {
    if (!dest) dest = { host: rinfo.address, port: rinfo.port };
    splitter.write(buf);
  });
  await new Promise((r) => sock.bind(o.listen || 0, '127.0.0.1', r));
  if (o.listen !== null) process.stderr.write('port ' + sock.address().port + '\n');

  const send = (name, fields, proto = 2) => {
    if (!dest) return;
    const P = proto === 1 ? mav.MavLinkProtocolV1 : mav.MavLinkProtocolV2;
    const frame = new P(o.sysid, 190).serialize(build(name, fields), seq);
    seq = (seq + 1) & 255;
    sock.send(frame, dest.port, dest.host);
  };
  const hb = () => send('HEARTBEAT', { type: 6, autopilot: 8, mavlink_version: 3 });
  const hbTimer = setInterval(hb, 1000);
  let streamTimer = null;

  for (const step of script) {
    if (step.do === 'send') send(step.msg, step.fields, step.proto);
    else if (step.do === 'wait') await new Promise((r) => setTimeout(r, step.ms));
    else if (step.do === 'stream') {
      clearInterval(streamTimer);
      streamTimer = setInterval(() => send(step.msg, step.fields), 1000 / step.hz);
    } else if (step.do === 'stream_stop') {
      clearInterval(streamTimer);
      streamTimer = null;
    } else if (step.do === 'await') {
      const got = await new Promise((resolve) => {
        const w = { msg: step.msg, where: step.where, sysid: step.sysid, resolve };
        waiters.push(w);
        setTimeout(() => {
          if (waiters.includes(w)) { waiters.splice(waiters.indexOf(w), 1); resolve(null); }
        }, step.timeout_ms || 5000);
      });
      out('step', { do: 'await', msg: step.msg, found: got !== null, got });
      continue;
    } else throw new Error('unknown step ' + JSON.stringify(step));
    out('step', { do: step.do, msg: step.msg });
  }
  clearInterval(hbTimer);
  clearInterval(streamTimer);
  sock.close();
}

main().catch((e) => { process.stderr.write('gcs_script: ' + e.message + '\n'); process.exit(1); });
