#!/usr/bin/python3
# labels: mavlink safety waits
"""The watch on the measured state with a MAVLink vehicle (SPEC §10): a gust
the vehicle cannot hold against (the emulator's --gust) carries it out of
the geofence while the plan waits; the positions it reports reach the watch
(host/drone/mavlink.c hands them over once the vehicle is up at its take-off
height), which records a monitor violation with the measured pose in run
--json, holds the vehicle and brings it back inside before it lands. The
climb itself, below the altitude band, is not an excursion."""

import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_emu_proc import Emu, free_udp_port  # noqa: E402
from mavlink_mission import event, mission, url_in  # noqa: E402

failures = 0
FENCE_CM = 200


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def scene(tmp):
    path = os.path.join(tmp, "fence.json")
    with open(path, "w") as f:
        f.write('{"limits": {"geofence_radius": %d, "min_z": 30, "max_z": 400, '
                '"max_move": 300}, "objects": []}' % FENCE_CM)
    return path


def main():
    tmp = tempfile.mkdtemp()
    port = free_udp_port()
    # A second in the air, the vehicle is pushed east at 5 m/s for 2 s; it
    # fights back at 3 m/s (the emulator's --speed): 2 m/s net, about 4 m
    # out by the end, twice the 2 m fence.
    emu = Emu(tmp, "--personality", "px4", "--connect", "127.0.0.1:%d" % port,
              "--climb", "3", "--gust", "500,1,2")
    rc, report, err, _ = mission(url_in(port), "d(4000)", tmp, "--scene", scene(tmp))
    emu.stop()
    report = report or {}
    mons = [v for v in report.get("violations", []) if v.get("skill") == "monitor"]
    check(rc == 0, "exit %d: %s" % (rc, err[-500:]))
    check(len(mons) == 1 and len(report["violations"]) == 1,
          "one violation, the watch's: %r" % report.get("violations"))
    if mons:
        at = mons[0]["pose"]
        # the pose is reported in whole centimetres: a position just past
        # the fence (200.6 cm) may read as exactly on it
        check("geofence" in mons[0]["reason"] and math.hypot(at["x"], at["y"]) >= FENCE_CM,
              "the measured position outside the fence: %r" % mons[0])
    check(report.get("excursion_cm", 0) > 0, "excursion_cm %r" % report.get("excursion_cm"))
    gust = event(emu, "gust")
    check(gust and gust[0].get("cm_s") == 500, "the emulator's gust blew: %r" % gust)
    # Brought back: the landing starts inside the fence (the vehicle by
    # itself would hold where aloft's hover left it, outside).
    landing = event(emu, "landed_state", state="LANDING")
    check(landing and math.hypot(landing[0]["pos"]["x"], landing[0]["pos"]["y"]) * 100 < FENCE_CM,
          "the landing starts inside the fence: %r" % (landing[0]["pos"] if landing else None))
    print("%d failed" % failures if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
