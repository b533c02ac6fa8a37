#!/usr/bin/python3
# labels: mavlink waits
"""Takeoff and landing when the COMMAND_ACK never comes
(host/drone/mavlink_fly.c, mavlink_command; mavlink.c, takeoff_ardupilot
and mav_land), against the vehicle emulator's --ack-lost (the vehicle acts
on the command, its answer is lost) and --no-ack (it neither acts nor
answers):

  - the command is sent again every 700 ms (ACK_WAIT_MS), 8 times at most
    (COMMAND_TRIES): 5.6 s; the takeoff then still watches the climb for
    2 s (a repeat refused while the first climbs), 7.6 s in all;
  - inside: the vehicle shows the takeoff (it climbs) or the landing (its
    LAND mode) 3 s or 2.5 s after the first command, with no answer: the
    command counts as accepted, and aloft stops sending it once it sees it
    (fewer than 8 sent, more than one);
  - outside: neither an answer nor the state change (--no-ack), or the
    effect only 12 s later, after the driver gave up: the mission fails with
    "no answer from the autopilot" after all 8 tries, and aloft disarms the
    vehicle it armed: it never leaves the ground, even when the takeoff
    comes late (the vehicle's own idle disarm set to 60 s).

The times are the emulator's: loose bounds only (the machine is shared)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_case import check, main, vehicle  # noqa: E402
from mavlink_mission import event, in_order, mission, sequence, write_scene  # noqa: E402

NAV_TAKEOFF = 22
NAV_LAND = 21
TRIES = 8
def fly(tmp, personality, *args, linger_s=0):
    """The mission mf(50) against a vehicle of PERSONALITY with the
    emulator's ARGS; the emulator stays LINGER_S s after the mission.
    Returns (exit status, report, stderr, emulator)."""
    emu, url = vehicle(tmp, personality, *args)
    rc, report, err, _ = mission(url, "mf(50)", tmp, "--scene", write_scene(tmp))
    if linger_s:
        emu.wait_for(lambda es: False, linger_s)
    emu.stop()
    return rc, report, err, emu


def sent(emu, cmd):
    """The emulator's clock times of the COMMAND_LONGs CMD it received."""
    return [r["t"] for r in emu.received("COMMAND_LONG") if r["fields"]["command"] == cmd]


def error_of(report):
    return (report or {}).get("error") or ""


def takeoff_inside(tmp):
    rc, report, err, emu = fly(tmp, "ardupilot", "--ack-lost", str(NAV_TAKEOFF),
                               "--act-after-ms", "3000")
    check(rc == 0 and report and report["ok"], "takeoff inside: the mission flies: %d %s"
          % (rc, err[-300:]))
    seq = sequence(emu)
    check(in_order(seq, ["armed", "cmd:22", "landed:TAKEOFF", "landed:ON_GROUND", "disarmed"]),
          "takeoff inside: climbs, flies, lands: %r" % seq)
    asked = sent(emu, NAV_TAKEOFF)
    climb = event(emu, "landed_state", state="TAKEOFF")
    check(asked and climb and climb[0]["t"] - asked[0] >= 2.5,
          "takeoff inside: the climb came late, as set (%r, %r)" % (asked[:1], climb[:1]))
    check(not emu.entries("ack") or not [a for a in emu.entries("ack")
                                         if a["command"] == NAV_TAKEOFF],
          "takeoff inside: no answer to the takeoff was sent")
    check(1 < len(asked) < TRIES, "takeoff inside: sent again while nothing showed, not once "
          "the climb did: %d times" % len(asked))


def takeoff_outside(tmp):
    for what, args in (("no answer, no climb", ["--no-ack", str(NAV_TAKEOFF)]),
                       ("the climb after the driver gave up",
                        ["--ack-lost", str(NAV_TAKEOFF), "--act-after-ms", "12000"])):
        rc, report, err, emu = fly(tmp, "ardupilot", *args, "--disarm-delay-s", "60",
                                   linger_s=6)
        check(rc == 1 and report and not report["ok"], "takeoff outside (%s): the mission "
              "fails: %d %s" % (what, rc, err[-300:]))
        check("no answer from the autopilot to the takeoff" in error_of(report),
              "takeoff outside (%s): says so: %r" % (what, error_of(report)))
        check(len(sent(emu, NAV_TAKEOFF)) == TRIES, "takeoff outside (%s): tried %d times"
              % (what, len(sent(emu, NAV_TAKEOFF))))
        check(report and not report["calls"], "takeoff outside (%s): no plan step ran" % what)
        # The vehicle aloft armed is disarmed again: a takeoff that comes
        # late (the vehicle's own idle disarm is set long here) finds it so.
        seq = sequence(emu)
        check("landed:TAKEOFF" not in seq, "takeoff outside (%s): the vehicle never left the "
              "ground: %r" % (what, seq))
        check(in_order(seq, ["armed", "cmd:400", "disarmed"]) and seq[-1] != "armed",
              "takeoff outside (%s): disarmed by aloft: %r" % (what, seq))


def landing_inside(tmp):
    for personality in ("ardupilot", "px4"):
        rc, report, err, emu = fly(tmp, personality, "--ack-lost", str(NAV_LAND),
                                   "--act-after-ms", "2500")
        check(rc == 0 and report and report["ok"], "landing inside %s: the mission succeeds: "
              "%d %s" % (personality, rc, err[-300:]))
        seq = sequence(emu)
        check(in_order(seq, ["landed:TAKEOFF", "cmd:21", "landed:LANDING", "landed:ON_GROUND",
                             "disarmed"]),
              "landing inside %s: lands and disarms: %r" % (personality, seq))
        asked = sent(emu, NAV_LAND)
        check(1 < len(asked) < TRIES, "landing inside %s: sent again while nothing showed, "
              "not once the landing did: %d times" % (personality, len(asked)))


def landing_outside(tmp):
    rc, report, err, emu = fly(tmp, "ardupilot", "--no-ack", str(NAV_LAND))
    check(rc == 1 and report and not report["ok"], "landing outside: the mission fails: %d %s"
          % (rc, err[-300:]))
    check("no answer from the autopilot to landing" in error_of(report),
          "landing outside: says so: %r" % error_of(report))
    check(len(sent(emu, NAV_LAND)) >= TRIES, "landing outside: tried %d times"
          % len(sent(emu, NAV_LAND)))
    check("landed:LANDING" not in sequence(emu), "landing outside: the vehicle never landed")


if __name__ == "__main__":
    main((takeoff_inside, takeoff_outside, landing_inside, landing_outside))
