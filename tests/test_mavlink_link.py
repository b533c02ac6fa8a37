#!/usr/bin/python3
# labels: mavlink mission waits
"""aloft run --drone mavlink against a small fake vehicle on loopback UDP
(tests/mav_peer.py): usage errors naming the URL forms, the message
sequence of a PX4 and an ArduPilot flight, two vehicles on one port routed
by system id, MAVLink 1 input, a PreArm refusal surfacing, a silent link
ending the mission, Ctrl-C holding and landing (or not, with --no-land)."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mav_peer  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0

ARM, TAKEOFF, LAND, SET_MODE, INTERVAL = 400, 22, 21, 176, 511


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def url(port):
    return "mavlink:udpin:127.0.0.1:%d" % port


def run(args, plan, timeout=120):
    p = subprocess.run([ALOFT, "run"] + args, input=plan, capture_output=True, text=True,
                       timeout=timeout)
    doc = {}
    if p.stdout.strip():
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            pass
    return p.returncode, doc, p.stderr


def usage_errors(db):
    forms = "udpin:HOST:PORT, udpout:HOST:PORT, tcp:HOST:PORT or serial:DEVICE:BAUD"
    for bad in ("mavlink:udp:1.2.3.4:14540", "mavlink:udpin:h:0", "mavlink:udpin:h:65536",
                "mavlink:serial:/dev/ttyS0:1234", "mavlink:", "mavlinkx"):
        rc, _, err = run(["--drone", bad, "--plan", "-", "--db", db], "mf(50)")
        check(rc == 2, "--drone %s: exit %d" % (bad, rc))
        if bad != "mavlinkx":
            check(forms in err, "--drone %s: the error names no accepted forms: %s" % (bad, err))
    for sysid, ok in (("0", False), ("1", True), ("255", True), ("256", False), ("x", False)):
        rc, _, err = run(["--drone", "mavlink:udpin:127.0.0.1:1", "--mavlink-sysid", sysid,
                          "--mavlink-ready-timeout-ms", "1000", "--plan", "-", "--db", db],
                         "mf(50)")
        # a valid id gets past the options and then finds no vehicle (exit 1)
        check(rc == (1 if ok else 2), "--mavlink-sysid %s: exit %d: %s" % (sysid, rc, err))
    scene = os.path.join(os.environ.get("SRC", "."), "examples/scenes/office.json")
    rc, _, err = run(["--mavlink-sysid", "3", "--scene", scene, "--plan",
                      "-", "--db", db], "mf(50)")
    check(rc == 2 and "--drone mavlink" in err, "--mavlink-sysid without --drone mavlink: %d" % rc)


def flight(db, autopilot, v1=False):
    port = free_port()
    v = mav_peer.Vehicle(port, sysid=1, autopilot=autopilot, v1=v1)
    # the vehicle is ready at once: a refused arming ends the flight after
    # 15 s (not the default 90)
    rc, doc, err = run(["--drone", url(port), "--mavlink-ready-timeout-ms", "15000", "--plan", "-",
                        "--json", "--db", db], "mf(100);tc(90);mf(50)")
    v.stop()
    name = ("PX4" if autopilot == mav_peer.PX4 else "ArduPilot") + (" (MAVLink 1)" if v1 else "")
    check(rc == 0 and doc.get("ok") is True, "%s flight: exit %d %s: %s" % (name, rc,
                                                                          doc.get("error"), err))
    cmds = [c for c in v.commands() if c != INTERVAL]
    want = [SET_MODE, ARM] + ([TAKEOFF] if autopilot == mav_peer.ARDUPILOT else []) + [LAND]
    check(cmds == want, "%s: commands %s, want %s" % (name, cmds, want))
    check(INTERVAL in v.commands(), "%s: no stream requested" % name)
    names = v.names()
    if autopilot == mav_peer.PX4:
        # setpoints streamed before the switch to OFFBOARD
        before = 0
        for n, f in v.received:
            if n == "COMMAND_LONG" and f["command"] == SET_MODE:
                break
            before += n == "SET_POSITION_TARGET_LOCAL_NED"
        check(before >= 5, "PX4: %d setpoints before OFFBOARD" % before)
    # forward 100 at heading 0 is 1 m north; then 90 right; forward 50 is east
    check(abs(v.pos[0] - 1.0) < 0.35 and abs(v.pos[1] - 0.5) < 0.35 and not v.armed,
          "%s: ended at %s armed %s" % (name, v.pos, v.armed))
    t = [x for x in v.targets() if x["coordinate_frame"] == 1]
    check(t and all(x["type_mask"] == 0x9F8 for x in t), "%s: targets carry no yaw" % name)
    check(all(x not in names for x in ("PARAM_SET",)), "%s: parameters written" % name)


def short_moves(db):
    # A move shorter than the 30 cm tolerance is flown, not counted done
    # where it starts: when the turn that follows is sent, the vehicle has
    # climbed at least halfway (10 cm) past the take-off height.
    port = free_port()
    v = mav_peer.Vehicle(port, autopilot=mav_peer.PX4, speed=0.5)
    rc, doc, err = run(["--drone", url(port), "--plan", "-", "--json", "--db", db],
                       "mu(20);tc(90)")
    v.stop()
    check(rc == 0, "short move: exit %d %s" % (rc, doc.get("error")))
    at = [p for (n, f), p in zip(v.received, v.pos_at)
          if n == "SET_POSITION_TARGET_LOCAL_NED" and abs(f["yaw"] - 1.5708) < 0.01]
    check(at and at[0][2] <= -2.6, "short move: the turn came at %s" % (at[:1],))


def px4_left_flying(db):
    # --no-land on PX4: no landing, and the vehicle is handed to its Hold
    # mode (AUTO.LOITER) before the setpoint stream stops with us.
    port = free_port()
    v = mav_peer.Vehicle(port, autopilot=mav_peer.PX4)
    rc, doc, err = run(["--drone", url(port), "--no-land", "--plan", "-", "--json", "--db", db],
                       "mu(20)")
    v.stop()
    check(rc == 0, "PX4 --no-land: exit %d %s" % (rc, doc.get("error")))
    modes = [(f["param2"], f["param3"]) for n, f in v.received
             if n == "COMMAND_LONG" and f["command"] == SET_MODE]
    check(LAND not in v.commands() and modes[-1:] == [(4, 3)],
          "PX4 --no-land: commands %s, modes %s" % (v.commands(), modes))
    check(v.armed, "PX4 --no-land: not left flying")


def routing(db):
    # Two vehicles on one port, each flown in turn by system id: the other
    # one is sent nothing at all (not even our heartbeat). The other one
    # starts once aloft has answered the one it flies: it is the vehicle
    # heard last, where a frame sent to any vehicle heard would go.
    autopilots = {1: mav_peer.PX4, 2: mav_peer.ARDUPILOT}
    plan = os.path.join(os.path.dirname(db), "routing.ms")
    with open(plan, "w") as f:
        f.write("mu(50)")
    for pick in (2, 1):
        port = free_port()
        vs = {pick: mav_peer.Vehicle(port, sysid=pick, autopilot=autopilots[pick])}
        p = subprocess.Popen([ALOFT, "run", "--drone", url(port), "--mavlink-sysid", str(pick),
                              "--plan", plan, "--json", "--db", db], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not vs[pick].names() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.02)
        vs[3 - pick] = mav_peer.Vehicle(port, sysid=3 - pick, autopilot=autopilots[3 - pick])
        while p.poll() is None and not vs[3 - pick].names():
            time.sleep(0.05)
        if p.poll() is None:  # the other vehicle was sent something: enough seen
            p.kill()
        out, err = p.communicate(timeout=120)
        rc, doc = p.returncode, json.loads(out) if out.strip() else {}
        for v in vs.values():
            v.stop()
        other = vs[3 - pick]
        check(rc == 0, "sysid %d of two: exit %d %s" % (pick, rc, doc.get("error")))
        check(other.names() == [], "sysid %d flown: vehicle %d was sent %s"
              % (pick, 3 - pick, sorted(set(other.names()))))
        check(LAND in vs[pick].commands(), "vehicle %d got %s" % (pick, vs[pick].commands()))


def prearm_refused(db):
    port = free_port()
    v = mav_peer.Vehicle(port, autopilot=mav_peer.ARDUPILOT, prearm_refusals=1000)
    t0 = time.monotonic()
    rc, doc, err = run(["--drone", url(port), "--mavlink-ready-timeout-ms", "3000", "--plan", "-",
                        "--json", "--db", db], "mf(50)")
    took = time.monotonic() - t0
    v.stop()
    check(rc == 1 and "PreArm: Need Position Estimate" in str(doc.get("error")),
          "PreArm refusal: exit %d, error %s" % (rc, doc.get("error")))
    check("waiting to arm" in err, "PreArm: no progress line: %s" % err)
    # bounded by --mavlink-ready-timeout-ms 3 s plus one command's tries;
    # 20 s is a generous bound on a loaded machine
    check(took < 20, "PreArm refusal took %.1f s" % took)
    check(v.armed is False and TAKEOFF not in v.commands(), "PreArm: took off anyway")


def silent_link(db):
    port = free_port()
    v = mav_peer.Vehicle(port, autopilot=mav_peer.PX4, silent_after=3.0)
    t0 = time.monotonic()
    try:
        # a mission that goes on past 20 s has missed the silence: no need
        # to wait for its end
        rc, doc, err = run(["--drone", url(port), "--plan", "-", "--json", "--db", db],
                           "mf(100);d(20000);mf(100)", timeout=20)
    except subprocess.TimeoutExpired:
        rc, doc, err = None, {"error": "still flying after 20 s"}, ""
    took = time.monotonic() - t0
    v.stop()
    check(rc == 1 and "fell silent" in str(doc.get("error")) and
          "failsafe" in str(doc.get("error")),
          "silent link: exit %d, error %s" % (rc, doc.get("error")))
    # silence starts 3 s after arming; the mission ends 3 s later (a 15 s
    # bound gives room for connecting and a loaded machine; the plan alone
    # would take over 20 s)
    check(took < 15, "silent link: the mission took %.1f s" % took)


def interrupt(db, no_land):
    port = free_port()
    v = mav_peer.Vehicle(port, autopilot=mav_peer.ARDUPILOT, speed=0.3)
    plan = os.path.join(os.path.dirname(db), "long.ms")
    with open(plan, "w") as f:
        f.write("mf(400)")
    args = ["--drone", url(port), "--plan", plan, "--json", "--db", db]
    if no_land:
        args.append("--no-land")
    p = subprocess.Popen([ALOFT, "run"] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    # the move's target is 4 m north of the take-off point
    while time.monotonic() < deadline and not any(t["x"] > 3 for t in v.targets()):
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, err = p.communicate(timeout=120)
    took = time.monotonic() - t0
    where = list(v.pos)
    v.stop()
    doc = json.loads(out) if out.strip() else {}
    tag = "Ctrl-C%s" % (" --no-land" if no_land else "")
    check(p.returncode == 1 and "cancel" in str(doc.get("error")).lower(),
          "%s: exit %d error %s" % (tag, p.returncode, doc.get("error")))
    t = v.targets()
    held = [x for x in t if x["x"] < 3]
    check(held and t[-1]["x"] < 3, "%s: no hold target after the cancel" % tag)
    modes = [c for c in v.commands() if c == SET_MODE]
    check(len(modes) == 1, "%s: a mode was switched after the cancel: %s" % (tag, v.commands()))
    if no_land:
        check(LAND not in v.commands(), "--no-land: landed")
    else:
        check(v.commands()[-1:] == [LAND], "%s: no landing: %s" % (tag, v.commands()))
    # within 2 s of the signal (SPEC §6), with slack for a loaded machine
    check(took < 4, "%s: took %.1f s" % (tag, took))
    check(where[0] < 3, "%s: flew on to %s" % (tag, where))


def main():
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "aloft.db")
    parts = {
        "usage_errors": lambda: usage_errors(db),
        "px4": lambda: flight(db, mav_peer.PX4),
        "ardupilot": lambda: flight(db, mav_peer.ARDUPILOT),
        "v1": lambda: flight(db, mav_peer.PX4, v1=True),
        "short_moves": lambda: short_moves(db),
        "px4_left_flying": lambda: px4_left_flying(db),
        "routing": lambda: routing(db),
        "prearm_refused": lambda: prearm_refused(db),
        "silent_link": lambda: silent_link(db),
        "interrupt": lambda: interrupt(db, no_land=False),
        "interrupt_no_land": lambda: interrupt(db, no_land=True),
    }
    # names of the parts to run (scripts/mutate.py runs one), all when none
    only = sys.argv[1:]
    unknown = [n for n in only if n not in parts]
    if unknown:
        print("FAIL: no part named %s; the parts: %s" % (unknown, " ".join(parts)))
        return 1
    for name, part in parts.items():
        if not only or name in only:
            part()
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
