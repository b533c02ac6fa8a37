'use strict';
// One UDP socket shared by every emulated vehicle, as several vehicles
// behind one radio or router share a port. It sends to the addresses given
// with --connect and to every peer heard from (a ground station on
// udpout), drops datagrams both ways with a seeded probability, delays
// them, and can interleave garbage bytes with the frames it sends.
const dgram = require('dgram');
const { mav } = require('./messages');

class Link {
  constructor({ connect = [], listen = null, loss = 0, delayMs = 0, garbage = 0, rng, log }) {
    this.connect = connect;
    this.listen = listen;
    this.loss = loss;
    this.delayMs = delayMs;
    this.garbage = garbage;
    this.rng = rng;
    this.log = log;
    this.peers = new Map();
    this.seq = new Map();
    this.silent = false;
    this.onPacket = () => {};
    this.stats = { sent: 0, dropped_out: 0, dropped_in: 0, garbage: 0 };
  }

  start() {
    this.sock = dgram.createSocket('udp4');
    this.sock.on('message', (buf, rinfo) => this.receive(buf, rinfo));
    return new Promise((resolve, reject) => {
      this.sock.once('error', reject);
      const port = this.listen === null ? 0 : this.listen;
      this.sock.bind(port, '127.0.0.1', () => resolve(this.sock.address().port));
    });
  }

  close() {
    if (this.sock) this.sock.close();
    this.sock = null;
  }

  // Each peer gets its own splitter, so that a frame cut by garbage from
  // one sender never swallows the next sender's datagram.
  peer(rinfo) {
    const key = rinfo.address + ':' + rinfo.port;
    let p = this.peers.get(key);
    if (!p) {
      const splitter = new mav.MavLinkPacketSplitter({}, {
        onCrcError: () => this.log.line('crc_error', { src: key }),
      });
      const parser = splitter.pipe(new mav.MavLinkPacketParser());
      p = { key, address: rinfo.address, port: rinfo.port, splitter };
      parser.on('data', (packet) => this.onPacket(packet, p));
      this.peers.set(key, p);
      this.log.line('peer', { src: key });
    }
    return p;
  }

  receive(buf, rinfo) {
    if (this.silent) return;
    if (this.rng() < this.loss) {
      this.stats.dropped_in++;
      return;
    }
    const p = this.peer(rinfo);
    const deliver = () => p.splitter.write(buf);
    if (this.delayMs > 0) setTimeout(deliver, this.delayMs);
    else deliver();
  }

  destinations() {
    const out = this.connect.map((c) => ({ address: c.host, port: c.port }));
    for (const p of this.peers.values()) {
      if (!out.some((d) => d.address === p.address && d.port === p.port)) out.push(p);
    }
    return out;
  }

  nextSeq(sysid, compid) {
    const key = sysid * 256 + compid;
    const s = this.seq.get(key) || 0;
    this.seq.set(key, (s + 1) & 255);
    return s;
  }

  // Sends MSG from vehicle SYSID (component COMPID) as MAVLink 2.
  send(sysid, compid, msg) {
    if (this.silent || !this.sock) return;
    const proto = new mav.MavLinkProtocolV2(sysid, compid);
    let frame = proto.serialize(msg, this.nextSeq(sysid, compid));
    if (this.garbage > 0 && this.rng() < this.garbage) {
      frame = Buffer.concat([this.junk(frame), frame]);
      this.stats.garbage++;
    }
    for (const d of this.destinations()) {
      if (this.rng() < this.loss) {
        this.stats.dropped_out++;
        continue;
      }
      this.stats.sent++;
      const out = () => this.sock && this.sock.send(frame, d.port, d.address);
      if (this.delayMs > 0) setTimeout(out, this.delayMs);
      else out();
    }
  }

  // Bytes a serial link's boot text or noise would put before a frame:
  // random bytes with frame magics among them, or the frame itself with a
  // byte flipped (its CRC then fails).
  junk(frame) {
    const n = 1 + Math.floor(this.rng() * 24);
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.rng() * 256);
    b[0] = this.rng() < 0.5 ? 0xfd : 0xfe;
    if (this.rng() < 0.5) return b;
    const bad = Buffer.from(frame);
    bad[10 + Math.floor(this.rng() * Math.max(1, bad.length - 12))] ^= 0x5a;
    return Buffer.concat([b, bad]);
  }
}

module.exports = { Link };
