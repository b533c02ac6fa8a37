#!/usr/bin/python3
# labels: mavlink waits
"""Missions of `aloft run --drone mavlink` against the vehicle emulator
(tests/mavlink/vehicle_emu.js, on node-mavlink) in both personalities: the
messages of a mission in the order each autopilot needs (PX4: setpoints
before offboard, offboard, arm, climb, land; ArduPilot: streams asked, wait
for readiness, GUIDED, arm, MAV_CMD_NAV_TAKEOFF, targets with yaw, land) and
the vehicle ending where the plan says; the scene's geofence; two
vehicles on one link flown by two missions without crossing. The ArduPilot
vehicle behaves as a SITL one can: its EKF origin off home's level (heights
stay above home), GUIDED refused until its position is good (tried again),
a lost request for a telemetry stream (asked again)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_case import check, main, vehicle  # noqa: E402
from mavlink_emu_proc import Emu  # noqa: E402
from mavlink_mission import (ends_where, event, fly, in_order, mission,  # noqa: E402
                             near, sequence, start_mission, write_scene)


def ends_where_planned(emu, what):
    for ok, how in ends_where(emu):
        check(ok, "%s: %s" % (what, how))


def px4(tmp):
    emu, rc, report, err = fly(tmp, "px4")
    check(rc == 0 and report and report["ok"], "px4: the mission succeeds: %d %s" % (rc, err[-400:]))
    seq = sequence(emu)
    check(in_order(seq, ["targets", "mode:OFFBOARD", "armed", "landed:TAKEOFF", "cmd:21",
                         "landed:ON_GROUND", "disarmed"]),
          "px4: setpoints, offboard, arm, climb, land, disarm: %r" % seq)
    check("offboard_lost" not in seq and "mode_refused" not in seq,
          "px4: offboard neither refused nor lost: %r" % seq)
    sp = emu.received("SET_POSITION_TARGET_LOCAL_NED")
    off = event(emu, "mode", mode="OFFBOARD")
    # PX4 wants the stream for about a second before the switch.
    check(sp and off and off[0]["t"] - sp[0]["t"] >= 0.9,
          "px4: setpoints streamed before offboard: %r"
          % (((sp[0]["t"], off[0]["t"]),) if sp and off else None))
    ends_where_planned(emu, "px4")


def ardupilot(tmp):
    # The EKF origin 1.5 m above home, as ArduPilot's can be (it is set at
    # the first GPS fix, home where the vehicle arms); its HOME_POSITION
    # then says x = y = z = 0: heights must still be above home.
    # And GUIDED refused for 2.5 s after the position first streams, as
    # ArduCopter's "requires position" until its estimate is good.
    # The first requests for GLOBAL_POSITION_INT (33) and EXTENDED_SYS_STATE
    # (245) are lost: aloft asks again for a stream that does not come.
    emu, rc, report, err = fly(tmp, "ardupilot", "--boot-ms", "4000", "--origin-alt-m", "1.5",
                               "--position-ok-ms", "2500", "--ignore-first-interval", "33,245")
    check(rc == 0 and report and report["ok"], "ardupilot: the mission succeeds: %d %s"
          % (rc, err[-400:]))
    seq = sequence(emu)
    check(in_order(seq, ["mode:GUIDED", "armed", "cmd:22", "landed:TAKEOFF", "targets",
                         "cmd:21", "mode:LAND", "landed:ON_GROUND", "disarmed"]),
          "ardupilot: GUIDED, arm, takeoff, targets, land, disarm: %r" % seq)
    check(not [s for s in seq if s in ("target_ignored", "descending", "arm_refused",
                                       "takeoff_refused")],
          "ardupilot: nothing refused or ignored, no stick mode: %r" % seq)
    for msgid in (33, 245):
        n = len([r for r in emu.received("COMMAND_LONG") if r["fields"]["command"] == 511
                 and r["fields"]["param1"] == msgid])
        check(n >= 2, "ardupilot: a stream that did not come (%d) was asked for again: %d"
              % (msgid, n))
    asked = [r["t"] for r in emu.received("COMMAND_LONG") if r["fields"]["command"] == 511]
    first_cmd = [r["t"] for r in emu.received("COMMAND_LONG") if r["fields"]["command"] != 511]
    check(asked and first_cmd and asked[0] < first_cmd[0],
          "ardupilot: telemetry asked for (SET_MESSAGE_INTERVAL) before anything else")
    armed = event(emu, "armed")
    check(armed and armed[0]["t"] >= 6.5, "ardupilot: armed only once ready (boot 4 s + 2.5 s)")
    check(event(emu, "mode_refused") and event(emu, "mode", mode="GUIDED"),
          "ardupilot: GUIDED refused while the position was not good, then taken")
    sp = emu.received("SET_POSITION_TARGET_LOCAL_NED")
    check(sp and all(not (r["fields"]["type_mask"] & 0x400) for r in sp),
          "ardupilot: every position target carries its yaw")
    check("waiting" in err, "ardupilot: progress lines while the vehicle boots: %r" % err[:300])
    takeoff = [r["fields"] for r in emu.received("COMMAND_LONG") if r["fields"]["command"] == 22]
    check(takeoff and all(abs(f["param7"] - 2.5) < 0.05 for f in takeoff),
          "ardupilot: MAV_CMD_NAV_TAKEOFF asks for 2.5 m above home: %r" % takeoff[:1])
    ends_where_planned(emu, "ardupilot")


def geofence(tmp):
    """The scene's geofence (400 cm) holds: a move past it is refused and
    the vehicle never gets there."""
    emu, rc, report, err = fly(tmp, "px4", plan="mf(300);mf(300)")
    # As with the Tello: the refused move returns False and the plan goes on.
    calls = report["calls"] if report else []
    check(rc == 0 and len(report["violations"]) == 1 and [c["ret"] for c in calls] == [True, False],
          "geofence: the second move is refused: %d %r" % (rc, report))
    far = [r for r in emu.received("SET_POSITION_TARGET_LOCAL_NED")
           if (r["fields"]["x"] ** 2 + r["fields"]["y"] ** 2) ** 0.5 > 4.0]
    check(not far, "geofence: no target beyond it was sent: %r" % far[:1])
    check(in_order(sequence(emu), ["armed", "cmd:21", "landed:ON_GROUND", "disarmed"]),
          "geofence: the vehicle lands after the refusal: %r" % sequence(emu))


def two_vehicles(tmp):
    """Two vehicles on one UDP port, each flown by its own mission over
    udpout with --mavlink-sysid: neither obeys the other's mission."""
    emu = Emu(tmp, "--personality", "ardupilot", "--sysids", "1,2", "--listen", "0")
    url = "mavlink:udpout:127.0.0.1:%d" % emu.port
    scene = write_scene(tmp)
    a = start_mission(url, "mf(150)", tmp, "--mavlink-sysid", "1", "--scene", scene)
    b = start_mission(url, "mb(100)", tmp, "--mavlink-sysid", "2", "--scene", scene)
    outs = [(p.stdout.read(), p.stderr.read(), p.wait(timeout=120)) for p in (a, b)]
    emu.stop()
    check(a.returncode == 0 and b.returncode == 0,
          "two vehicles: both missions succeed: %d %d %s %s"
          % (a.returncode, b.returncode, outs[0][1][-300:], outs[1][1][-300:]))
    srcs = {sysid: {r["src"] for r in emu.entries("recv")
                    if r["sysid"] == sysid and r["msg"] != "HEARTBEAT"}
            for sysid in (1, 2)}
    check(len(srcs[1]) == 1 and len(srcs[2]) == 1 and srcs[1] != srcs[2],
          "two vehicles: each is commanded by one mission only: %r" % srcs)
    check(not emu.entries("unrouted"), "two vehicles: nothing sent to a vehicle that is not there")
    for sysid, x in ((1, 1.5), (2, -1.0)):
        landing = event(emu, "landed_state", sysid, state="LANDING")
        check(landing and near(landing[0]["pos"], x, 0.0),
              "two vehicles: vehicle %d flew its own plan: %r"
              % (sysid, landing[0]["pos"] if landing else None))
        check(in_order(sequence(emu, sysid), ["armed", "landed:ON_GROUND", "disarmed"]),
              "two vehicles: vehicle %d took off and landed" % sysid)


def pick_one(tmp):
    """Two vehicles send to one udpin port: --mavlink-sysid 2 flies the
    second and leaves the first alone."""
    emu, url = vehicle(tmp, "px4", "--sysids", "1,2")
    rc, report, err, _ = mission(url, "mf(100)", tmp, "--mavlink-sysid", "2",
                                 "--scene", write_scene(tmp))
    emu.stop()
    check(rc == 0 and report and report["ok"], "pick one: the mission flies vehicle 2: %d %s"
          % (rc, err[-300:]))
    check(not [r for r in emu.entries("recv") if r["sysid"] == 1 and r["msg"] != "HEARTBEAT"],
          "pick one: vehicle 1 was sent nothing")
    check(in_order(sequence(emu, 2), ["armed", "landed:TAKEOFF", "landed:ON_GROUND", "disarmed"]),
          "pick one: vehicle 2 flew: %r" % sequence(emu, 2))
    check(sequence(emu, 1) == ["mode:AUTO.LOITER"], "pick one: vehicle 1 stayed as it was: %r"
          % sequence(emu, 1))


if __name__ == "__main__":
    main((px4, ardupilot, geofence, two_vehicles, pick_one))
