#!/usr/bin/python3
# labels: mavlink waits
"""A MAVLink mission through a lossy link: 30 % of the datagrams dropped
each way (seeded, tests/mavlink/vehicle_emu.js --loss), in both
personalities: the mission still completes, the vehicle takes off, ends
where the plan says, lands and disarms."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_mission import ends_where, fly, in_order, sequence  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def main():
    tmp = tempfile.mkdtemp()
    for personality in sys.argv[1:] or ("px4", "ardupilot"):
        emu, rc, report, err = fly(tmp, personality, "--loss", "0.3", "--seed", "11")
        what = "loss " + personality
        stop = emu.entries("stop")
        check(stop and stop[0]["dropped_out"] > 0 and stop[0]["dropped_in"] > 0,
              "%s: datagrams were dropped both ways" % what)
        check(rc == 0 and report and report["ok"],
              "%s: the mission completes: %d %s" % (what, rc, err[-400:]))
        check(in_order(sequence(emu), ["armed", "landed:TAKEOFF", "landed:ON_GROUND", "disarmed"]),
              "%s: took off and landed: %r" % (what, sequence(emu)))
        for ok, how in ends_where(emu):
            check(ok, "%s: %s" % (what, how))
    print("%d failed" % failures if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
