#!/usr/bin/python3
# labels: mavlink waits
"""What goes wrong with a MAVLink vehicle, against the vehicle emulator
(tests/mavlink/vehicle_emu.js): a link that falls silent ends the mission
in bounded time; a refused arming, a failed takeoff or mode switch and an
unanswered command surface as the mission's error with the autopilot's own
words; a vehicle never ready ends the wait; Ctrl-C lands the vehicle."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_case import check, main, vehicle  # noqa: E402
from mavlink_mission import (event, in_order, mission, sequence, start_mission,  # noqa: E402
                             write_scene)

LONG_PLAN = "mf(200);mb(200);mf(200);mb(200);mf(200);mb(200)"


def error_of(report):
    return (report or {}).get("error") or ""


def silent_link(tmp):
    """The vehicle stops talking in flight: aloft ends the mission after 3 s
    of silence, not later (the vehicle's own failsafe then acts)."""
    for personality in ("px4", "ardupilot"):
        emu, url = vehicle(tmp, personality, "--silent-after-s", "10")
        rc, report, err, _ = mission(url, LONG_PLAN, tmp, "--scene", write_scene(tmp))
        end = time.time()
        emu.stop()
        silent = [e for e in emu.entries("state") if e["event"] == "silent"]
        check(silent and event(emu, "armed") and
              event(emu, "armed")[0]["wall"] < silent[0]["wall"],
              "silent %s: the link fell silent in flight" % personality)
        check(rc == 1 and report and not report["ok"], "silent %s: the mission fails: %d %s"
              % (personality, rc, err[-300:]))
        check("silent" in error_of(report) or "lost" in error_of(report),
              "silent %s: the error says the link is lost: %r" % (personality, error_of(report)))
        # 3 s of silence is the rule; 6 s leaves room for a loaded machine
        # and for the landing attempt the mission makes at its end.
        if silent:
            took = end - silent[0]["wall"]
            check(2.5 <= took <= 6.0, "silent %s: the mission ended %.1f s after the silence"
                  % (personality, took))


def refusals(tmp):
    """Refusals surface with the autopilot's words; the vehicle stays down."""
    cases = [
        ("ardupilot", ["--refuse-arm"], "PreArm: refused by the emulator"),
        ("px4", ["--refuse-arm"], "Preflight Fail: refused by the emulator"),
        ("ardupilot", ["--ack-fail", "22"], "takeoff"),
        ("px4", ["--ack-fail", "176"], "OFFBOARD"),
        ("ardupilot", ["--no-ack", "400"], "no answer"),
    ]
    for personality, args, words in cases:
        emu, url = vehicle(tmp, personality, *args)
        # A refusal may be the vehicle still booting: aloft retries until
        # its ready timeout, here 5 s.
        rc, report, err, took = mission(url, "mf(100)", tmp, "--scene", write_scene(tmp),
                                        "--mavlink-ready-timeout-ms", "5000")
        emu.stop()
        what = "%s %s" % (personality, " ".join(args))
        check(rc == 1 and report and not report["ok"] and not report["calls"],
              "%s: the mission fails before any move: %d %s" % (what, rc, err[-300:]))
        check(words in error_of(report), "%s: the error says %r: %r"
              % (what, words, error_of(report)))
        check("landed:TAKEOFF" not in sequence(emu), "%s: the vehicle never left the ground: %r"
              % (what, sequence(emu)))
        # Given up in bounded time: the ready timeout, or a command's retries.
        check(took < 30, "%s: the mission gave up in %.0f s" % (what, took))


def never_ready(tmp):
    """A vehicle that never gets ready to arm ends the wait, and says why."""
    emu, url = vehicle(tmp, "ardupilot", "--boot-ms", "600000")
    rc, report, err, took = mission(url, "mf(100)", tmp, "--mavlink-ready-timeout-ms", "4000")
    emu.stop()
    check(rc == 1 and "not ready" in error_of(report), "never ready: %d %r %s"
          % (rc, error_of(report), err[-300:]))
    check("waiting" in err, "never ready: progress lines: %r" % err[-300:])
    check(not event(emu, "armed"), "never ready: never armed")
    check(took < 30, "never ready: gave up after %.0f s" % took)


def ctrl_c(tmp):
    """Ctrl-C in flight: the vehicle holds, then lands and disarms."""
    for personality in ("px4", "ardupilot"):
        emu, url = vehicle(tmp, personality)
        p = start_mission(url, LONG_PLAN, tmp, "--scene", write_scene(tmp))
        up = emu.wait_for(lambda es: any(e.get("event") == "landed_state" and
                                         e.get("state") == "IN_AIR" for e in es), 60)
        check(up, "ctrl-c %s: the vehicle took off" % personality)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        # aloft may leave once the vehicle has accepted the landing: the
        # vehicle lands by itself.
        emu.wait_for(lambda es: any(e.get("event") == "disarmed" for e in es), 30)
        emu.stop()
        seq = sequence(emu)
        check(in_order(seq, ["landed:IN_AIR", "cmd:21", "landed:ON_GROUND", "disarmed"]),
              "ctrl-c %s: lands and disarms: %r %s" % (personality, seq, err[-300:]))
        check(p.returncode != 0, "ctrl-c %s: the mission does not claim success" % personality)


if __name__ == "__main__":
    main((silent_link, refusals, never_ready, ctrl_c))
