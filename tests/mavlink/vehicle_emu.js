#!/usr/bin/env node
'use strict';
// A MAVLink vehicle emulator for aloft's tests, on node-mavlink (an
// independent MAVLink implementation): one process, one UDP socket on
// loopback, one or several vehicles by system id, behaving like PX4 or
// ArduPilot. It prints "port N" (its UDP port) on stdout once ready and
// always exits by --max-runtime-s. See --help.
const { Link } = require('./emu/link');
const { Log } = require('./emu/log');
const { Vehicle } = require('./emu/vehicle');
const { makeRng } = require('./emu/rng');
const { decode } = require('./emu/messages');
const gust = require('./emu/gust');
const pause = require('./emu/pause');

const USAGE = `usage: vehicle_emu.js [options]
  --personality px4|ardupilot   the autopilot to behave like (default px4)
  --sysids 1,2                  the vehicles' system ids (default 1)
  --connect HOST:PORT           send to this address (a ground station on udpin);
                                may be given more than once
  --listen PORT                 bind this UDP port (0: any; a ground station on udpout)
  --loss P                      drop this fraction of datagrams each way (seeded)
  --seed N                      the seed of loss and garbage (default 1)
  --delay-ms N                  delay every datagram each way by N ms
  --boot-ms N                   not ready to arm (PreArm) for N ms after start
  --position-ok-ms N            ArduPilot: GUIDED and arming still refused for N ms
                                after the position streams (EKF origin set, position
                                not yet good; default 0)
  --log FILE                    one JSON line per message received and state change
  --max-runtime-s N             exit after N s whatever happens (default 120)
  --silent-after-s N            stop sending and answering after N s
  --refuse-arm                  refuse every arming, with a STATUSTEXT
  --ack-fail CMD,...            answer these MAV_CMD ids with MAV_RESULT_FAILED
  --no-ack CMD,...              never answer these MAV_CMD ids
  --ack-lost CMD,...            act on these MAV_CMD ids but lose their COMMAND_ACK
                                (the vehicle's state shows what they did)
  --act-after-ms N              the commands of --ack-lost take effect N ms after
                                they come (default 0)
  --garbage P                   put junk bytes before this fraction of frames
  --disarm-delay-s N            disarm when armed on the ground this long (default 10)
  --offboard-loss-ms N          PX4: leave offboard after N ms without setpoints
                                (COM_OF_LOSS_T; default 1000)
  --speed M                     horizontal speed, m/s (default 3)
  --climb M                     vertical speed, m/s (default 1.5)
  --battery PCT                 battery at start (default 95)
  --drain PCT                   battery drain per second armed (default 0.05)
  --fs-gcs-s N                  ArduPilot: its GCS failsafe on (FS_GCS_ENABLE 1,
                                FS_GCS_TIMEOUT N): RTL when flying and no HEARTBEAT
                                from system 255 came for N s (default off)
  --ignore-first-interval ID,...
                                the first SET_MESSAGE_INTERVAL for each of these
                                message ids is not acted on (as if lost; acknowledged)
  --origin-alt-m M              the local frame's origin (EKF origin) M metres above
                                home: LOCAL_POSITION_NED and local targets are offset
                                by it, HOME_POSITION's x, y, z stay 0 (as many ArduPilot
                                releases send them), GLOBAL_POSITION_INT's
                                relative_alt stays above home (default 0)
  --gust CM_S,AFTER_S,FOR_S     once AFTER_S s in the air, push the vehicle east at CM_S
                                cm/s for FOR_S s (faster than --speed: it is carried off)
  --pause-stream MSGID,AFTER_S,FOR_MS
                                once AFTER_S s in the air, stop streaming message MSGID
                                for FOR_MS ms (then it streams again at its interval)`;

function fail(msg) {
  process.stderr.write('vehicle_emu: ' + msg + '\n' + USAGE + '\n');
  process.exit(2);
}

function num(name, s, min, max) {
  const n = Number(s);
  if (s === undefined || s === '' || !Number.isFinite(n) || n < min || n > max) {
    fail(`${name} wants a number in [${min}, ${max}], not '${s}'`);
  }
  return n;
}

function hostPort(s) {
  const m = /^([0-9.]+|localhost):(\d+)$/.exec(s || '');
  if (!m) fail(`--connect wants HOST:PORT, not '${s}'`);
  return { host: m[1] === 'localhost' ? '127.0.0.1' : m[1], port: num('--connect port', m[2], 1, 65535) };
}

function list(name, s, min, max) {
  if (!s) fail(`${name} wants a comma-separated list`);
  return s.split(',').map((x) => num(name, x, min, max));
}

function parseArgs(argv) {
  const o = {
    personality: 'px4', sysids: [1], connect: [], listen: null, loss: 0, seed: 1, delayMs: 0,
    bootMs: 0, log: null, maxRuntimeS: 120, silentAfterS: null, refuseArm: false, ackFail: [],
    noAck: [], ackLost: [], actAfterMs: 0, garbage: 0, disarmDelayS: 10, offboardLossMs: 1000, speed: 3, climb: 1.5,
    battery: 95, drainPerS: 0.05, originAltM: 0, positionOkMs: 0, ignoreFirstInterval: [], fsGcsS: null, gust: null, pause: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    switch (a) {
      case '--personality': o.personality = v(); if (!['px4', 'ardupilot'].includes(o.personality)) fail('--personality is px4 or ardupilot'); break;
      case '--sysids': o.sysids = list(a, v(), 1, 255); break;
      case '--connect': o.connect.push(hostPort(v())); break;
      case '--listen': o.listen = num(a, v(), 0, 65535); break;
      case '--loss': o.loss = num(a, v(), 0, 1); break;
      case '--seed': o.seed = num(a, v(), 0, 2 ** 32 - 1); break;
      case '--delay-ms': o.delayMs = num(a, v(), 0, 60000); break;
      case '--boot-ms': o.bootMs = num(a, v(), 0, 3600000); break;
      case '--position-ok-ms': o.positionOkMs = num(a, v(), 0, 3600000); break;
      case '--log': o.log = v(); if (!o.log) fail('--log wants a file'); break;
      case '--max-runtime-s': o.maxRuntimeS = num(a, v(), 0.1, 86400); break;
      case '--silent-after-s': o.silentAfterS = num(a, v(), 0, 86400); break;
      case '--refuse-arm': o.refuseArm = true; break;
      case '--ack-fail': o.ackFail = list(a, v(), 0, 65535); break;
      case '--no-ack': o.noAck = list(a, v(), 0, 65535); break;
      case '--ack-lost': o.ackLost = list(a, v(), 0, 65535); break;
      case '--act-after-ms': o.actAfterMs = num(a, v(), 0, 600000); break;
      case '--garbage': o.garbage = num(a, v(), 0, 1); break;
      case '--disarm-delay-s': o.disarmDelayS = num(a, v(), 0, 3600); break;
      case '--offboard-loss-ms': o.offboardLossMs = num(a, v(), 1, 60000); break;
      case '--speed': o.speed = num(a, v(), 0.1, 50); break;
      case '--climb': o.climb = num(a, v(), 0.1, 20); break;
      case '--battery': o.battery = num(a, v(), 0, 100); break;
      case '--drain': o.drainPerS = num(a, v(), 0, 100); break;
      case '--fs-gcs-s': o.fsGcsS = num(a, v(), 0.1, 3600); break;
      case '--ignore-first-interval': o.ignoreFirstInterval = list(a, v(), 0, 16777215); break;
      case '--origin-alt-m': o.originAltM = num(a, v(), -100, 100); break;
      case '--gust': o.gust = gust.parse(v()); if (!o.gust) fail('--gust wants CM_S,AFTER_S,FOR_S (CM_S in (0, 10000], FOR_S > 0)'); break;
      case '--pause-stream': o.pause = pause.parse(v()); if (!o.pause) fail('--pause-stream wants MSGID,AFTER_S,FOR_MS (a streamed message id, FOR_MS > 0)'); break;
      case '--help': process.stdout.write(USAGE + '\n'); process.exit(0); break;
      default: fail(`unknown option '${a}'`);
    }
  }
  if (o.connect.length === 0 && o.listen === null) fail('give --connect HOST:PORT or --listen PORT');
  if (new Set(o.sysids).size !== o.sysids.length) fail('--sysids has a system id twice');
  return o;
}

// The vehicles a message is for: those of its target_system (0: all), or
// all for a message with none (a ground station's HEARTBEAT).
function route(vehicles, msg) {
  const hasTarget = msg.constructor.FIELDS.some((f) => f.source === 'target_system' && !f.extension);
  if (!hasTarget || msg.targetSystem === 0) return vehicles;
  return vehicles.filter((v) => v.sysid === msg.targetSystem);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const personality = require('./emu/' + o.personality);
  const log = new Log(o.log);
  const rng = makeRng(o.seed);
  const link = new Link({ connect: o.connect, listen: o.listen, loss: o.loss, delayMs: o.delayMs, garbage: o.garbage, rng, log });
  // PX4 SITL's and ArduPilot SITL's default homes.
  const home = o.personality === 'px4' ? { homeLat: 47.397742, homeLon: 8.545594, homeAlt: 488 }
    : { homeLat: -35.363262, homeLon: 149.165237, homeAlt: 584 };
  const vehicles = o.sysids.map((id, i) => new Vehicle(id, i, Object.create(personality), link, log, { ...o, ...home }));
  if (o.gust) vehicles.forEach((v) => gust.install(v, o.gust));
  if (o.pause) vehicles.forEach((v) => pause.install(v, o.pause));
  link.onPacket = (packet, peer) => {
    const msg = decode(packet);
    if (!msg) return;
    const from = { key: peer.key, srcsys: packet.header.sysid, srccomp: packet.header.compid, proto: packet.protocol instanceof require('node-mavlink').MavLinkProtocolV1 ? 1 : 2 };
    const to = route(vehicles, msg);
    if (to.length === 0) log.line('unrouted', { src: peer.key, msg: msg.constructor.MSG_NAME, target: msg.targetSystem });
    for (const v of to) v.handle(msg.constructor.MSG_NAME, msg, from);
  };
  const port = await link.start();
  log.line('start', { personality: o.personality, sysids: o.sysids, port });
  process.stdout.write('port ' + port + '\n');

  const TICK_MS = 20;
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    const dt = Math.min(0.2, (now - last) / 1000);
    last = now;
    for (const v of vehicles) v.tick(dt);
  }, TICK_MS);
  if (o.silentAfterS !== null) {
    setTimeout(() => { link.silent = true; log.line('state', { event: 'silent' }); }, o.silentAfterS * 1000);
  }
  const stop = (why) => {
    clearInterval(timer);
    log.line('stop', { why, ...link.stats });
    link.close();
    process.exit(0);
  };
  setTimeout(() => stop('max runtime'), o.maxRuntimeS * 1000);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e) => { process.stderr.write('vehicle_emu: ' + e.message + '\n'); process.exit(1); });
