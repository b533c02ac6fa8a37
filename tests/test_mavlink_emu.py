#!/usr/bin/python3
# labels: mavlink waits
"""The MAVLink vehicle emulator (tests/mavlink/vehicle_emu.js) driven by a
ground station that is not aloft (tests/mavlink/gcs_script.js, both on
node-mavlink): PX4 refuses offboard without a setpoint stream, accepts it
after one and leaves it when the stream stops; ArduPilot is silent until
asked for streams, refuses to arm during its boot with PreArm texts,
disarms when left idle, takes off and lands in GUIDED; two vehicles on one
link; loss, garbage, the fault switches; the codec vectors."""

import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_emu_proc import (EMU, NODE, VECTORS, Emu, Gcs, free_udp_port, gcs,  # noqa: E402
                              require_node_mavlink)

failures = 0
MODE_FLAG_ARMED = 128
PX4_HOLD = (4 << 16) | (3 << 24)  # AUTO.LOITER: main mode 4, sub mode 3
PX4_OFFBOARD = 6 << 16
AP_GUIDED, AP_LAND, AP_STABILIZE = 4, 9, 0
ACCEPTED, TEMPORARILY_REJECTED, FAILED = 0, 1, 4


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def cmd(command, sysid=1, **params):
    fields = {"command": command, "target_system": sysid, "target_component": 1}
    fields.update(params)
    return {"do": "send", "msg": "COMMAND_LONG", "fields": fields}


def ack(command, timeout_ms=3000, sysid=None):
    step = {"do": "await", "msg": "COMMAND_ACK", "where": {"command": command},
            "timeout_ms": timeout_ms}
    if sysid is not None:
        step["sysid"] = sysid
    return step


def wait(ms):
    return {"do": "wait", "ms": ms}


def setpoints(x=0.0, y=0.0, z=-2.0, hz=5, sysid=1, yaw=None):
    mask = 0xFF8 if yaw is not None else 0xDF8  # position (and yaw) only
    f = {"target_system": sysid, "target_component": 1, "coordinate_frame": 1,
         "type_mask": mask, "x": x, "y": y, "z": z}
    if yaw is not None:
        f["yaw"] = yaw
    return {"do": "stream", "msg": "SET_POSITION_TARGET_LOCAL_NED", "hz": hz, "fields": f}


def acks(steps):
    """The results of the awaited COMMAND_ACKs, in order (None: none came)."""
    return [s["got"]["fields"]["result"] if s["found"] else None
            for s in steps if s["do"] == "await" and s["msg"] == "COMMAND_ACK"]


def of(recv, msg, sysid=None):
    return [r for r in recv if r["msg"] == msg and (sysid is None or r["sysid"] == sysid)]


def after(recv, t):
    return [r for r in recv if r["t"] >= t]


def step_time(steps, i):
    return steps[i]["t"]


def px4(tmp):
    emu = Emu(tmp, "--personality", "px4", "--listen", "0")
    # Offboard refused with no setpoints; a stream of 5 Hz for 0.5 s (just
    # short of the second PX4 wants) is refused too; after 1.3 s it is
    # accepted, then arming, the climb toward the setpoint, and when the
    # stream stops, Hold.
    script = [
        cmd(176, param1=1, param2=6), ack(176),
        setpoints(hz=5), wait(500), cmd(176, param1=1, param2=6), ack(176),
        wait(800), cmd(176, param1=1, param2=6), ack(176),
        cmd(400, param1=1), ack(400), wait(2500),
        {"do": "stream_stop"}, wait(2000),
        cmd(21), ack(21), wait(4500),
    ]
    recv, steps = gcs(script, connect=emu.port)
    results = acks(steps)
    check(results[:4] == [TEMPORARILY_REJECTED, TEMPORARILY_REJECTED, ACCEPTED, ACCEPTED],
          "px4: offboard refused without and with a short stream, accepted after 1.3 s, "
          "armed: %r" % results)
    texts = [r["fields"]["text"] for r in of(recv, "STATUSTEXT")]
    check(any("Offboard" in t for t in texts), "px4: the refusal is said in a STATUSTEXT: %r" % texts)
    hb = of(recv, "HEARTBEAT", 1)
    check(hb and hb[0]["fields"]["autopilot"] == 12 and hb[0]["fields"]["type"] == 2,
          "px4: HEARTBEAT says PX4, quadrotor: %r" % (hb[:1],))
    check(hb and hb[0]["fields"]["custom_mode"] == PX4_HOLD, "px4: boots in Hold (AUTO.LOITER)")
    modes = [h["fields"]["custom_mode"] for h in hb]
    check(PX4_OFFBOARD in modes, "px4: HEARTBEAT shows offboard: %r" % sorted(set(modes)))
    check(any(h["fields"]["base_mode"] & MODE_FLAG_ARMED for h in hb), "px4: HEARTBEAT shows armed")
    check(of(recv, "LOCAL_POSITION_NED") and of(recv, "BATTERY_STATUS") and
          of(recv, "EXTENDED_SYS_STATE") and of(recv, "HOME_POSITION"),
          "px4: streams telemetry without being asked")
    zs = [r["fields"]["z"] for r in of(recv, "LOCAL_POSITION_NED")]
    check(min(zs) < -1.8, "px4: climbed toward the setpoint at z=-2: min z %.2f" % min(zs))
    ev = [e["event"] + ":" + e.get("mode", "") for e in emu.events(1)]
    i_off = ev.index("mode:OFFBOARD") if "mode:OFFBOARD" in ev else -1
    check(i_off >= 0 and "offboard_lost:" in ev[i_off:] and "mode:AUTO.LOITER" in ev[i_off:],
          "px4: leaves offboard for Hold when the setpoints stop: %r" % ev)
    lost = [e for e in emu.events(1) if e["event"] == "offboard_lost"]
    last_sp = emu.received("SET_POSITION_TARGET_LOCAL_NED")[-1]["t"]
    # The rule is 1 s (COM_OF_LOSS_T); 1.8 s leaves room for a loaded machine.
    check(lost and 0.9 <= lost[0]["t"] - last_sp <= 1.8,
          "px4: offboard left 1 s after the last setpoint: %r" % (lost[:1],))
    check("mode:AUTO.LAND" in ev and "disarmed:" in ev, "px4: NAV_LAND lands and disarms: %r" % ev)
    landed = of(recv, "EXTENDED_SYS_STATE")[-1]["fields"]["landed_state"]
    check(landed == 1, "px4: on the ground after landing (landed_state %r)" % landed)
    emu.stop()


def ardupilot(tmp):
    emu = Emu(tmp, "--personality", "ardupilot", "--listen", "0", "--boot-ms", "2500",
              "--disarm-delay-s", "2")
    tgt = {"target_system": 1, "target_component": 1, "coordinate_frame": 1,
           "type_mask": 0xDF8, "x": 0, "y": 4, "z": -3}
    script = [
        wait(1500),
        cmd(400, param1=1), ack(400),                       # arm during boot
        {"do": "send", "msg": "SET_MODE", "fields": {"target_system": 1, "base_mode": 1,
                                                     "custom_mode": AP_GUIDED}},
        ack(11),                                            # GUIDED with no position
        {"do": "send", "msg": "SET_POSITION_TARGET_LOCAL_NED", "fields": tgt},
        cmd(511, param1=32, param2=100000), ack(511),
        cmd(511, param1=245, param2=200000), ack(511),
        cmd(511, param1=30, param2=100000), ack(511),
        wait(1200),
        {"do": "send", "msg": "SET_MODE", "fields": {"target_system": 1, "base_mode": 1,
                                                     "custom_mode": AP_GUIDED}},
        ack(11),
        cmd(22, param7=3), ack(22),                         # takeoff disarmed
        cmd(400, param1=1), ack(400), wait(3000),           # armed, left idle: disarms
        cmd(400, param1=1), ack(400),
        cmd(22, param7=3), ack(22), wait(3000),
        {"do": "send", "msg": "SET_POSITION_TARGET_LOCAL_NED", "fields": tgt}, wait(3000),
        # back west, then a target in a frame ArduCopter does not take
        # (GLOBAL_RELATIVE_ALT): it stops where it is
        {"do": "send", "msg": "SET_POSITION_TARGET_LOCAL_NED", "fields": dict(tgt, y=-4)},
        wait(300),
        {"do": "send", "msg": "SET_POSITION_TARGET_LOCAL_NED", "fields": dict(tgt, coordinate_frame=6)},
        wait(1500),
        cmd(21), ack(21), wait(6000),
    ]
    recv, steps = gcs(script, connect=emu.port)
    results = acks(steps)
    check(results == [FAILED, FAILED, 0, 0, 0, 0, FAILED, 0, 0, 0, 0],
          "ardupilot: arm refused in boot, GUIDED refused without position, intervals set, "
          "GUIDED, takeoff refused disarmed, arm, re-arm, takeoff, land: %r" % results)
    t_interval = step_time(steps, 6)
    early = [r["msg"] for r in recv if r["t"] < t_interval]
    check(early and set(early) <= {"HEARTBEAT", "STATUSTEXT", "COMMAND_ACK"},
          "ardupilot: nothing but HEARTBEAT and STATUSTEXT before SET_MESSAGE_INTERVAL: %r"
          % sorted(set(early)))
    check(of(after(recv, t_interval), "LOCAL_POSITION_NED"),
          "ardupilot: LOCAL_POSITION_NED streams once asked")
    check(not of(recv, "BATTERY_STATUS"), "ardupilot: a stream not asked for stays off")
    texts = [r["fields"]["text"] for r in of(recv, "STATUSTEXT")]
    check(any(t.startswith("PreArm: ") for t in texts), "ardupilot: PreArm texts: %r" % texts)
    hb = of(recv, "HEARTBEAT")
    check(hb and hb[0]["fields"]["autopilot"] == 3 and hb[0]["fields"]["custom_mode"] == AP_STABILIZE,
          "ardupilot: HEARTBEAT says ArduPilot, STABILIZE")
    check(AP_GUIDED in [h["fields"]["custom_mode"] for h in hb], "ardupilot: GUIDED is mode 4")
    # base_mode as ArduCopter's: MANUAL_INPUT always, GUIDED_ENABLED in
    # GUIDED; MAV_STATE STANDBY on the ground, ACTIVE in the air.
    check(all(h["fields"]["base_mode"] & 64 for h in hb) and
          all(h["fields"]["base_mode"] & 8 for h in hb if h["fields"]["custom_mode"] == AP_GUIDED) and
          not any(h["fields"]["base_mode"] & 8 for h in hb if h["fields"]["custom_mode"] == AP_STABILIZE),
          "ardupilot: base_mode flags: %r" % sorted({h["fields"]["base_mode"] for h in hb}))
    check(hb[0]["fields"]["system_status"] == 3 and 4 in [h["fields"]["system_status"] for h in hb],
          "ardupilot: MAV_STATE standby, then active: %r" % [h["fields"]["system_status"] for h in hb])
    events = emu.events(1)
    ev = [e["event"] for e in events]
    check(ev.count("target_ignored") == 1,
          "ardupilot: the position target outside GUIDED was ignored: %r" % ev)
    check([e.get("why") for e in events if e["event"] == "disarmed"][:1] == ["idle"],
          "ardupilot: disarms itself when left idle after arming: %r" % ev)
    pos = of(recv, "LOCAL_POSITION_NED")
    check(min(r["fields"]["z"] for r in pos) < -2.8, "ardupilot: took off to 3 m")
    check(max(r["fields"]["y"] for r in pos) > 3.8, "ardupilot: flew to the target 4 m east")
    east = [i for i, r in enumerate(pos) if r["fields"]["y"] > 3.8]
    west = min(r["fields"]["y"] for r in pos[east[0]:]) if east else None
    check("target_rejected" in ev and west is not None and west > 1.0,
          "ardupilot: a target in an unknown frame stops it (not on to 4 m west): %r" % west)
    # A target without yaw: ArduPilot turns to the direction of travel (east).
    yaws = [r["fields"]["yaw"] for r in of(recv, "ATTITUDE")]
    check(any(abs(y - math.pi / 2) < 0.1 for y in yaws),
          "ardupilot: faced its direction of travel: %r" % yaws[-3:])
    check("LAND" in [e.get("mode") for e in events] and ev[-1] == "disarmed",
          "ardupilot: NAV_LAND ends in LAND with a disarm: %r" % ev[-4:])
    ext = of(recv, "EXTENDED_SYS_STATE")
    check(ext and ext[-1]["fields"]["landed_state"] == 1, "ardupilot: landed state on-ground at the end")
    check(2 in [e["fields"]["landed_state"] for e in ext], "ardupilot: landed state in-air in flight")
    emu.stop()


def two_vehicles(tmp):
    """Two vehicles on one link: each obeys only what is addressed to it."""
    emu = Emu(tmp, "--personality", "ardupilot", "--sysids", "1,2", "--listen", "0")
    script = [
        cmd(511, sysid=2, param1=32, param2=100000), ack(511, sysid=2),
        {"do": "send", "msg": "SET_MODE", "fields": {"target_system": 2, "base_mode": 1,
                                                     "custom_mode": AP_GUIDED}},
        ack(11, sysid=2), cmd(400, sysid=2, param1=1), ack(400, sysid=2),
        cmd(22, sysid=2, param7=2), ack(22, sysid=2), wait(2500),
    ]
    recv, steps = gcs(script, connect=emu.port)
    check(acks(steps) == [0, 0, 0, 0], "two vehicles: vehicle 2 obeys: %r" % acks(steps))
    check(of(recv, "HEARTBEAT", 1) and of(recv, "HEARTBEAT", 2), "two vehicles: both heartbeat")
    check([r["sysid"] for r in of(recv, "COMMAND_ACK")] == [2, 2, 2, 2],
          "two vehicles: only vehicle 2 answers")
    check(not of(recv, "LOCAL_POSITION_NED", 1), "two vehicles: vehicle 1 was not asked for streams")
    check([e["event"] for e in emu.events(1)] == ["mode"], "two vehicles: vehicle 1 did nothing: %r"
          % emu.events(1))
    check("armed" in [e["event"] for e in emu.events(2)], "two vehicles: vehicle 2 armed")
    check(of(recv, "LOCAL_POSITION_NED", 2), "two vehicles: vehicle 2 streams what was asked")
    emu.stop()


def loss(tmp):
    """Loss each way, seeded: 0 drops nothing, 0.3 about 30 % of the
    datagrams sent, 1 everything."""
    got = {}
    for p in ("0", "0.3", "1"):
        emu = Emu(tmp, "--personality", "px4", "--listen", "0", "--loss", p, "--seed", "7")
        script = [{"do": "send", "msg": "HEARTBEAT", "fields": {"type": 6}}, wait(3000)]
        recv, _ = gcs(script, connect=emu.port)
        emu.stop()
        stop = emu.entries("stop")[0]
        total = stop["sent"] + stop["dropped_out"]
        got[p] = (len(recv), stop["dropped_out"] / total if total else None)
    check(got["0"][0] >= 20 and got["0"][1] == 0, "loss 0: everything arrives: %r" % got)
    check(got["0.3"][0] > 0 and 0.2 <= got["0.3"][1] <= 0.4,
          "loss 0.3: about 30 %% of what is sent is dropped: %r" % got)
    check(got["1"][0] == 0, "loss 1: nothing arrives: %r" % got)


def connect_mode(tmp):
    """--connect: the emulator sends to a ground station's udpin port, as a
    real autopilot's GCS output does; MAVLink 1 commands are understood."""
    port = free_udp_port()
    g = Gcs([wait(1500), dict(cmd(400, param1=1), proto=1), ack(400), wait(1000)], listen=port)
    emu = Emu(tmp, "--personality", "px4", "--connect", "127.0.0.1:%d" % port)
    recv, steps = g.result()
    emu.stop()
    check(len(of(recv, "HEARTBEAT")) >= 2, "connect: heartbeats reach the ground station")
    check(acks(steps) == [0], "connect: a MAVLink 1 arm command is acknowledged: %r" % acks(steps))
    r = emu.received("COMMAND_LONG")
    check(r and r[0]["proto"] == 1, "connect: the emulator logs the command as MAVLink 1")


def garbage(tmp):
    """Junk bytes between frames: a decoder that resynchronises still gets
    most of them."""
    emu = Emu(tmp, "--personality", "px4", "--listen", "0", "--garbage", "0.2", "--seed", "3")
    recv, _ = gcs([{"do": "send", "msg": "HEARTBEAT", "fields": {"type": 6}}, wait(4000)],
                  connect=emu.port)
    emu.stop()
    check(emu.entries("stop")[0]["garbage"] > 0, "garbage: junk was sent")
    # Junk with a frame magic and a long length swallows the frames after it
    # in node-mavlink's splitter, as in most decoders; most still arrive.
    n = len(of(recv, "LOCAL_POSITION_NED"))
    check(of(recv, "HEARTBEAT") and n >= 15, "garbage: telemetry gets through: %d" % n)


def faults(tmp):
    emu = Emu(tmp, "--personality", "px4", "--listen", "0", "--refuse-arm", "--ack-fail", "22",
              "--no-ack", "21")
    recv, steps = gcs([cmd(400, param1=1), ack(400), cmd(22), ack(22), cmd(21), ack(21, 1500)],
                      connect=emu.port)
    emu.stop()
    check(acks(steps) == [TEMPORARILY_REJECTED, FAILED, None],
          "faults: arm refused, takeoff failed, land unanswered: %r" % acks(steps))
    texts = [r["fields"]["text"] for r in of(recv, "STATUSTEXT")]
    check(any(t.startswith("Preflight Fail") for t in texts), "faults: the refusal says why: %r" % texts)

    emu = Emu(tmp, "--personality", "px4", "--listen", "0", "--silent-after-s", "1.5")
    recv, _ = gcs([{"do": "send", "msg": "HEARTBEAT", "fields": {"type": 6}}, wait(4000)],
                  connect=emu.port)
    emu.stop()
    silent = [e for e in emu.entries("state") if e["event"] == "silent"]
    check(silent and of(recv, "HEARTBEAT"), "silent: heard before going silent")
    late = [r for r in recv if r["t"] > 2.5]
    check(not late, "silent: nothing heard after going silent: %r" % late[:1])

    # --delay-ms delays each way: an answer comes a round trip later.
    emu = Emu(tmp, "--personality", "px4", "--listen", "0", "--delay-ms", "400")
    recv, steps = gcs([cmd(511, param1=32, param2=100000), ack(511, 5000)], connect=emu.port)
    emu.stop()
    sent_at = [s["t"] for s in steps if s["do"] == "send"]
    got_at = [s["got"] and s["t"] for s in steps if s["do"] == "await"]
    check(sent_at and got_at[0] and got_at[0] - sent_at[0] >= 0.7,
          "delay: the answer took a round trip of 2 x 400 ms: %r %r" % (sent_at, got_at))

    # The emulator always exits, and refuses options it does not know.
    p = subprocess.run([NODE, EMU, "--listen", "0", "--max-runtime-s", "1"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0 and p.stdout.startswith("port "), "max runtime: exits by itself")
    for bad in (["--listen", "0", "--loss", "1.5"], ["--listen", "0", "--loss", "nan"],
                ["--connect", "nowhere"], [], ["--listen", "0", "--sysids", "1,1"],
                ["--listen", "0", "--personality", "betaflight"]):
        p = subprocess.run([NODE, EMU] + bad, capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and "vehicle_emu:" in p.stderr,
              "bad options %r refused (%d %r)" % (bad, p.returncode, p.stderr[:80]))


def vectors(tmp):
    """The codec vectors: every message the driver uses, both protocols,
    truncated and not; the decoder accepts node-mavlink's frames and refuses
    a frame with a byte changed."""
    out = os.path.join(tmp, "vectors.json")
    subprocess.run([NODE, VECTORS, "--out", out], check=True, timeout=60)
    with open(out) as f:
        doc = json.load(f)
    check(os.path.getsize(out) < 64 * 1024, "vectors: the file stays small")
    kinds = {(fr["msg"], fr["proto"], fr["truncated"]) for fr in doc["frames"]}
    for name, m in doc["messages"].items():
        check((name, 2, True) in kinds and (name, 2, False) in kinds,
              "vectors: %s in MAVLink 2, truncated and not" % name)
        check(m["id"] >= 256 or (name, 1, False) in kinds, "vectors: %s in MAVLink 1" % name)
    check(doc["messages"]["HEARTBEAT"]["crc_extra"] == 50 and
          doc["messages"]["COMMAND_LONG"]["crc_extra"] == 152,
          "vectors: CRC_EXTRA of HEARTBEAT 50, COMMAND_LONG 152 (the MAVLink XML's)")
    frames = [fr["hex"] for fr in doc["frames"]]
    bad = bytearray.fromhex(frames[0])
    bad[12] ^= 1
    lines = frames + [bad.hex(), "zz", frames[0][:20]]
    p = subprocess.run([NODE, VECTORS, "--decode"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=60)
    res = [json.loads(l) for l in p.stdout.splitlines()]
    check(len(res) == len(lines), "decode: one answer a line")
    good = res[:len(frames)]
    check(all(r["ok"] for r in good), "decode: every vector frame is accepted")
    check(all(r["fields"] == fr["fields"] for r, fr in zip(good, doc["frames"])),
          "decode: the fields decoded are the vectors'")
    check([r.get("error") for r in res[len(frames):]] == ["crc", "hex", "incomplete"],
          "decode: a changed byte, non-hex and a cut frame are refused: %r" % res[len(frames):])


def main():
    require_node_mavlink()
    tmp = tempfile.mkdtemp()
    tests = (px4, ardupilot, two_vehicles, loss, connect_mode, garbage, faults, vectors)
    only = sys.argv[1:]  # names of the parts to run, all when none
    for t in tests:
        if not only or t.__name__ in only:
            t(tmp)
    print("%d failed" % failures if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
