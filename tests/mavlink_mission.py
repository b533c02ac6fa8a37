"""Shared by the MAVLink mission tests: a mission of `aloft run --drone
mavlink` against the vehicle emulator, and readings of the emulator's log."""
import json
import os
import subprocess
import tempfile
import time

ALOFT = os.environ.get("ALOFT", "build/aloft")

# The limits of a simulator scene, for the constraint check of a MAVLink
# mission (the vehicle's world has no objects).
SCENE = {"limits": {"geofence_radius": 400, "min_z": 30, "max_z": 400, "max_move": 300},
         "objects": []}


def write_scene(tmp):
    path = os.path.join(tmp, "limits.json")
    with open(path, "w") as f:
        json.dump(SCENE, f)
    return path


def url_in(port):
    return "mavlink:udpin:127.0.0.1:%d" % port


def mission(drone, plan, tmp, *args, timeout=120):
    """Runs `aloft run --drone DRONE --plan -` with PLAN; returns (exit
    status, the JSON report or None, stderr, seconds it took)."""
    t0 = time.monotonic()
    p = subprocess.run([ALOFT, "run", "--drone", drone, "--plan", "-", "--json",
                        "--db", os.path.join(tmp, "missions.db")] + list(args),
                       input=plan, capture_output=True, text=True, timeout=timeout)
    try:
        report = json.loads(p.stdout)
    except ValueError:
        report = None
    return p.returncode, report, p.stderr, time.monotonic() - t0


def start_mission(drone, plan, tmp, *args):
    """The same, started: a Popen (the plan in a file, so that several
    missions start at once)."""
    fd, path = tempfile.mkstemp(dir=tmp, suffix=".ms")
    with os.fdopen(fd, "w") as f:
        f.write(plan)
    return subprocess.Popen([ALOFT, "run", "--drone", drone, "--plan", path, "--json",
                             "--db", os.path.join(tmp, "missions.db")] + list(args),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def sequence(emu, sysid=1):
    """The mission as the vehicle saw it, in order: commands by MAV_CMD id
    ("cmd:176"), SET_MODE ("set_mode:4"), the first of each run of position
    targets ("targets"), and state changes ("mode:GUIDED", "armed",
    "landed:ON_GROUND", ...)."""
    out = []
    for e in emu.entries():
        if e.get("sysid") != sysid:
            continue
        if e["kind"] == "recv":
            m, f = e["msg"], e["fields"]
            if m == "COMMAND_LONG" and f["command"] != 511:
                out.append("cmd:%d" % f["command"])
            elif m == "SET_MODE":
                out.append("set_mode:%d" % f["custom_mode"])
            elif m == "SET_POSITION_TARGET_LOCAL_NED" and (not out or out[-1] != "targets"):
                out.append("targets")
        elif e["kind"] == "state":
            ev = e["event"]
            if ev == "mode":
                out.append("mode:" + e["mode"])
            elif ev == "landed_state":
                out.append("landed:" + e["state"])
            elif ev in ("armed", "disarmed", "offboard_lost", "target_ignored", "descending",
                        "arm_refused", "mode_refused", "takeoff_refused"):
                out.append(ev)
    return out


def in_order(seq, wanted):
    """Whether WANTED occur in SEQ in this order (others may come between)."""
    i = 0
    for s in seq:
        if i < len(wanted) and s == wanted[i]:
            i += 1
    return i == len(wanted)


def event(emu, name, sysid=1, **match):
    """The state changes NAME of SYSID (matching MATCH)."""
    return [e for e in emu.events(sysid) if e["event"] == name and
            all(e.get(k) == v for k, v in match.items())]


def near(pos, x, y, z=None, tol=0.35):
    """Whether local NED POS is within TOL metres of (x, y[, z])."""
    d2 = (pos["x"] - x) ** 2 + (pos["y"] - y) ** 2
    if z is not None:
        d2 += (pos["z"] - z) ** 2
    return d2 <= tol * tol


# Forward 1.2 m (north), turn to face east, up 0.5 m, left 1 m (north
# again): the vehicle ends 2.2 m north of home, 0.5 m above the take-off
# height of 2.5 m.
PLAN = "mf(120);tc(90);mu(50);ml(100)"
END = {"x": 2.2, "y": 0.0, "z": -3.0}


def fly(tmp, personality, *emu_args, plan=PLAN):
    """A mission of PLAN against one vehicle of PERSONALITY (the emulator
    sends to aloft's udpin port); returns the emulator (stopped), the exit
    status, the report and stderr."""
    from mavlink_emu_proc import Emu, free_udp_port
    port = free_udp_port()
    emu = Emu(tmp, "--personality", personality, "--connect", "127.0.0.1:%d" % port, *emu_args)
    rc, report, err, _ = mission(url_in(port), plan, tmp, "--scene", write_scene(tmp))
    emu.stop()
    return emu, rc, report, err


def ends_where(emu):
    """(ok, what) pairs: the landing starts where PLAN ends, and the vehicle
    comes down below that point."""
    landing = event(emu, "landed_state", state="LANDING")
    down = event(emu, "landed_state", state="ON_GROUND")
    return [
        (bool(landing) and near(landing[0]["pos"], END["x"], END["y"], END["z"]),
         "the landing starts where the plan ends (%r): %r"
         % (END, landing[0]["pos"] if landing else None)),
        (bool(down) and near(down[-1]["pos"], END["x"], END["y"]),
         "lands below it: %r" % (down[-1]["pos"] if down else None)),
    ]
