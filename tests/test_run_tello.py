#!/usr/bin/python3
# labels: mission waits
"""aloft run --drone tello against the Tello emulator (tests/tools/tello_emu):
the exact commands a plan sends, --no-land, a low battery, a scene's
geofence, a vision skill with no camera, Ctrl-C, the record and replay, and
usage errors."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from tello_emu_proc import Emu

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def run(args, plan, timeout=120):
    p = subprocess.run([ALOFT, "run"] + args, input=plan, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def interrupt(emu, word, args, timeout=120):
    """Runs `aloft run` with ARGS against EMU, sends SIGINT once the
    emulator has received a command starting with WORD, and waits.
    Returns (exit status, stdout, stderr, seconds from the signal to the
    exit)."""
    p = subprocess.Popen([ALOFT, "run"] + emu.args() + args, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while word not in emu.lines("recv") and time.monotonic() < deadline:
        time.sleep(0.05)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err, time.monotonic() - t0


def main():
    tmp = tempfile.mkdtemp()
    db = os.path.join(tmp, "aloft.db")
    fast = ("--speed", "1000", "--turn-rate", "1440")

    # A plan flies the exact commands: connect, battery, takeoff, the moves
    # (ml(10) is under the Tello's 20 cm minimum: right 20 then left 30),
    # then stop and land.
    emu = Emu(tmp, *fast)
    rc, out, err = run(emu.args() + ["--no-video", "--plan", "-", "--json", "--db", db],
                       "mf(120);tc(90);mu(30);ml(10);tu(45);->True")
    emu.stop()
    check(rc == 0, "plan on the Tello: exit %d: %s" % (rc, err))
    doc = json.loads(out) if rc == 0 else {}
    check(doc.get("ok") is True, "report not ok: %s" % out)
    check([c["skill"] for c in doc.get("calls", [])] ==
          ["move_forward", "turn_cw", "move_up", "move_left", "turn_ccw"],
          "calls: %s" % doc.get("calls"))
    want = ["command", "battery?", "battery?", "takeoff", "forward 120", "cw 90", "up 30",
            "right 20", "left 30", "ccw 45", "stop", "land"]
    check(emu.sent() == want, "sequence\n  got  %s\n  want %s" % (emu.sent(), want))
    check("streamon" not in emu.sent(), "--no-video sent streamon")

    # The mission is recorded as a Tello mission, and replay refuses it.
    mid = doc.get("mission_id")
    p = subprocess.run([ALOFT, "log", "--db", db, "--json", str(mid)], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0 and
          json.loads(p.stdout)["mission"].get("drone") == "tello:127.0.0.1",
          "recorded drone: %s %s" % (p.stdout[:300], p.stderr))
    rc, out, err = run(["--replay", str(mid), "--db", db], "")
    check(rc == 1 and "flown on tello:127.0.0.1" in err and "simulator missions only" in err,
          "replay of a Tello mission: exit %d: %s" % (rc, err))

    # --no-land: the mission ends in the air.
    emu = Emu(tmp, *fast)
    rc, out, err = run(emu.args() + ["--no-video", "--no-land", "--plan", "-", "--json",
                                     "--db", db], "mf(50)")
    emu.stop()
    check(rc == 0, "--no-land: exit %d: %s" % (rc, err))
    check("land" not in emu.sent() and "forward 50" in emu.sent(),
          "--no-land: sent %s" % emu.sent())

    # A low battery: no takeoff, exit 1 with the reason.
    emu = Emu(tmp, "--battery", "12", *fast)
    rc, out, err = run(emu.args() + ["--no-video", "--plan", "-", "--db", db], "mf(50)")
    emu.stop()
    check(rc == 1 and "battery" in err.lower() and "12" in err,
          "low battery: exit %d: %s" % (rc, err))
    check("takeoff" not in emu.sent() and "forward 50" not in emu.sent(),
          "low battery: sent %s" % emu.sent())

    # A scene's limits apply: a move out of its geofence never reaches the drone.
    scene = os.path.join(tmp, "small.json")
    with open(scene, "w") as f:
        json.dump({"limits": {"geofence_radius": 200}, "objects": []}, f)
    emu = Emu(tmp, *fast)
    rc, out, err = run(emu.args() + ["--no-video", "--scene", scene, "--plan", "-", "--json",
                                     "--db", db], "mf(250)")
    emu.stop()
    doc = json.loads(out) if out.strip() else {}
    calls = doc.get("calls", [])
    check(rc == 0 and len(doc.get("violations", [])) == 1 and len(calls) == 1 and
          calls[0]["ret"] is False, "geofence: exit %d, report %s" % (rc, out[:400]))
    check(not any(c.startswith("forward") for c in emu.sent()),
          "geofence: the refused move was sent: %s" % emu.sent())
    check(emu.sent()[-1:] == ["land"], "geofence: did not land: %s" % emu.sent())

    # No detector: the Tello mission has no camera, and says so.
    emu = Emu(tmp, *fast)
    rc, out, err = run(emu.args() + ["--no-video", "--plan", "-", "--json", "--db", db],
                       "?iv('person'){l('yes')}")
    emu.stop()
    doc = json.loads(out) if out.strip() else {}
    check(rc == 1 and "no camera" in str(doc.get("error")),
          "vision without a detector: exit %d, error %s" % (rc, doc.get("error")))
    check(emu.sent()[-1:] == ["land"], "vision without a detector: did not land")

    # Ctrl-C mid-move: the driver sends stop, the mission ends cancelled, then lands.
    emu = Emu(tmp, "--speed", "50")
    plan = os.path.join(tmp, "long.ms")
    with open(plan, "w") as f:
        f.write("mf(400);mf(400)")
    rc, out, err, took = interrupt(
        emu, "forward 400", ["--no-video", "--plan", plan, "--json", "--db", db])
    emu.stop()
    doc = json.loads(out) if out.strip() else {}
    check(rc == 1 and "cancel" in str(doc.get("error")).lower(),
          "Ctrl-C: exit %d, error %s, stderr %s" % (rc, doc.get("error"), err))
    check("forward 400" in emu.lines("interrupted"), "Ctrl-C: the move was not interrupted")
    sent = emu.sent()
    check(sent.count("forward 400") == 1 and sent[-2:] == ["stop", "land"],
          "Ctrl-C: sent %s" % sent)
    p = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc.get("mission_id"))],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and json.loads(p.stdout)["mission"].get("status") == "cancelled",
          "Ctrl-C: recorded status: %s" % p.stdout[:300])

    # Ctrl-C mid-move on a drone that has gone silent in flight (it hears
    # but answers neither the move, nor stop, nor land): the landing is
    # tried once and briefly, the process ends within 2 s of the signal
    # (SPEC §6; asserted with 1 s of slack for a loaded machine; it took
    # over 100 s before), and the unconfirmed landing is a failure that
    # says the drone may still be flying.
    emu = Emu(tmp, "--speed", "50", "--ignore", "forward", "--ignore", "stop", "--ignore", "land")
    rc, out, err, took = interrupt(
        emu, "forward 400", ["--no-video", "--plan", plan, "--json", "--db", db], timeout=300)
    emu.stop()
    doc = json.loads(out) if out.strip() else {}
    check(took < 3.0, "Ctrl-C on a drone silent in flight took %.1f s" % took)
    check(rc == 1 and doc.get("ok") is False and
          "may still be flying" in str(doc.get("error")),
          "Ctrl-C on a drone silent in flight: exit %d, error %s" % (rc, doc.get("error")))
    check(emu.sent().count("land") == 1, "silent in flight: sent %s" % emu.sent())
    # A cancelled mission whose landing failed is recorded as failed, not
    # as cancelled: the drone may still be up.
    p = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc.get("mission_id"))],
                       capture_output=True, text=True, timeout=60)
    rec = json.loads(p.stdout)["mission"] if p.returncode == 0 else {}
    check(rec.get("status") == "failed" and "may still be flying" in str(rec.get("error")),
          "silent in flight: recorded %s" % p.stdout[:300])

    # Ctrl-C during takeoff: the takeoff gives up (stop), the drone lands,
    # the mission is recorded as cancelled.
    emu = Emu(tmp, "--speed", "20")
    rc, out, err, took = interrupt(emu, "takeoff", ["--no-video", "--plan", plan, "--db", db])
    emu.stop()
    sent = emu.sent()
    check(rc == 1 and "cancelled" in err,
          "Ctrl-C in takeoff: exit %d: %s" % (rc, err))
    check("takeoff" in emu.lines("interrupted") and sent[-2:] == ["stop", "land"] and
          not any(c.startswith("forward") for c in sent), "Ctrl-C in takeoff: sent %s" % sent)
    p = subprocess.run([ALOFT, "log", "--db", db], capture_output=True, text=True, timeout=60)
    check(p.stdout.strip().splitlines()[-1:] and "cancelled" in p.stdout.strip().splitlines()[-1],
          "Ctrl-C in takeoff: not recorded as cancelled: %s" % p.stdout[-300:])

    # Ctrl-C against a drone that never answers (here while `command` waits
    # for its 7 s reply): SPEC §7 asks for the cancel within 1 s. Asserted
    # with slack (2 s) for a loaded machine: the old code took 32 s.
    emu = Emu(tmp, "--silent")
    rc, out, err, took = interrupt(
        emu, "command", ["--no-video", "--plan", plan, "--json", "--db", db])
    emu.stop()
    check(took < 2.0, "Ctrl-C on a silent drone took %.1f s" % took)
    check(rc == 1 and "cancel" in err, "Ctrl-C on a silent drone: exit %d: %s" %
          (rc, err))
    check(not any(c in ("takeoff", "land") for c in emu.sent()),
          "Ctrl-C on a silent drone: sent %s" % emu.sent())

    # An absent drone is reported within the time its message states: the
    # handshake's 4 tries share the 2000 ms timeout (500 ms each). The
    # bound (2 s more) only allows for a loaded machine; the old wait was
    # twice the message's 4 x 2000 ms.
    emu = Emu(tmp, "--silent")
    t0 = time.monotonic()
    rc, out, err = run(emu.args() + ["--no-video", "--tello-timeout-ms", "2000", "--plan", "-",
                                     "--db", db], "mf(50)")
    took = time.monotonic() - t0
    emu.stop()
    check(rc == 1 and "no reply" in err and "4 tries, 500 ms each" in err,
          "absent drone: exit %d: %s" % (rc, err))
    check(took < 4.0, "absent drone: reported after %.1f s" % took)
    check(emu.sent() == ["command"] * 4, "absent drone: sent %s" % emu.sent())

    # A landing the drone refuses (it stays in the air): exit 1, ok false,
    # the error says the drone may still be flying, recorded as failed.
    emu = Emu(tmp, "--reply", "land=error", *fast)
    rc, out, err = run(emu.args() + ["--no-video", "--plan", "-", "--json", "--db", db],
                       "mf(50)")
    emu.stop()
    doc = json.loads(out) if out.strip() else {}
    error = str(doc.get("error"))
    check(rc == 1 and doc.get("ok") is False and "may still be flying" in error and
          "land" in error, "refused landing: exit %d, report %s, stderr %s" % (rc, out[:400], err))
    check("may still be flying" in err, "refused landing: nothing on stderr: %s" % err)
    check("done land" not in emu.lines("done") and "land" in emu.sent(),
          "refused landing: sent %s" % emu.sent())
    p = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc.get("mission_id"))],
                       capture_output=True, text=True, timeout=60)
    m = json.loads(p.stdout).get("mission", {}) if p.returncode == 0 else {}
    check(m.get("status") == "failed" and "may still be flying" in str(m.get("error")),
          "refused landing: recorded %s" % p.stdout[:400])

    # Usage errors: exit 2 with a message, nothing flown.
    for args, what in [
        (["--drone", "parrot"], "parrot"),
        (["--drone", "tello:"], "tello:HOST"),
        (["--tello-port", "9000", "--scene", scene], "--drone tello"),
        (["--no-land", "--scene", scene], "--drone tello"),
        (["--drone", "tello", "--tello-port", "0"], "--tello-port"),
        (["--drone", "tello", "--detector", "sim"], "--detector sim"),
        (["--drone", "tello", "--no-video", "--detector", "hog"], "--no-video"),
        (["--drone", "tello", "--replay", "1"], "--replay"),
    ]:
        rc, out, err = run(args + ["--plan", "-", "--db", db], "mf(50)")
        check(rc == 2 and what in err, "usage %s: exit %d: %s" % (args, rc, err))

    if failures:
        print("%d failure(s)" % failures)
        return 1
    print("test_run_tello: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
