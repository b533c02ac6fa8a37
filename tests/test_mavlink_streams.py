#!/usr/bin/python3
# labels: mavlink waits
"""A telemetry stream that stops coming is asked for again, at the edge of
the rule (host/drone/mavlink_fly.c, mavlink_refresh_streams): a stream
sent every 250 ms (GLOBAL_POSITION_INT as aloft asks for it) is stale once
nothing of it came for 3 s (STALE_MIN_MS; five intervals are less), and
the driver looks every 2 s (REFRESH_MS, mavlink.c). Against the vehicle
emulator's --pause-stream, in flight, the HEARTBEAT and the other streams
going on:

  - under: a pause of 1.8 s (a gap of at most about 2 s with the interval)
    is never stale: no SET_MESSAGE_INTERVAL for it, then or later;
  - over: a pause of 7 s is stale from about 3 s on, and a look comes at
    least every 2 s: at least one request for it, not before 2.5 s of the
    pause (the rule's 3 s, less the interval and some slack between the two
    processes' clocks) and before the stream came back.

The bounds are that loose on purpose: the two processes share a loaded
machine, and the driver only looks every 2 s."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_case import check, main, vehicle  # noqa: E402
from mavlink_mission import event, mission, write_scene  # noqa: E402

GLOBAL_POSITION_INT = 33
SET_MESSAGE_INTERVAL = 511
def paused_flight(tmp, pause_ms, plan):
    """A mission of PLAN while the vehicle, 1 s in the air, pauses its
    GLOBAL_POSITION_INT stream for PAUSE_MS. Returns (the emulator, when the
    pause began and ended on its clock or None, the times of the requests
    for the stream)."""
    emu, url = vehicle(tmp, "ardupilot", "--pause-stream",
                       "%d,1,%d" % (GLOBAL_POSITION_INT, pause_ms))
    rc, report, err, _ = mission(url, plan, tmp, "--scene", write_scene(tmp))
    emu.stop()
    check(rc == 0 and report and report["ok"], "pause %d ms: the mission flies: %d %s"
          % (pause_ms, rc, err[-300:]))
    began, ended = event(emu, "stream_paused"), event(emu, "stream_resumed")
    landing = event(emu, "landed_state", state="LANDING")
    check(began and ended and landing and ended[0]["t"] < landing[0]["t"],
          "pause %d ms: the whole pause came in flight" % pause_ms)
    asked = [r["t"] for r in emu.received("COMMAND_LONG")
             if r["fields"]["command"] == SET_MESSAGE_INTERVAL
             and r["fields"]["param1"] == GLOBAL_POSITION_INT]
    check(asked, "pause %d ms: the stream was asked for at the start" % pause_ms)
    span = (began[0]["t"], ended[0]["t"]) if began and ended else None
    return span, asked


def under(tmp):
    span, asked = paused_flight(tmp, 1800, "d(5000)")
    if span:
        again = [t for t in asked if t >= span[0]]
        check(not again, "under: a gap of under 3 s is not stale, yet the stream was asked "
              "for again at %r (pause %.2f-%.2f)" % (again, span[0], span[1]))


def over(tmp):
    span, asked = paused_flight(tmp, 7000, "d(10000)")
    if span:
        again = [t for t in asked if t >= span[0]]
        check(again, "over: a stream silent for 7 s was not asked for again (pause %.2f-%.2f)"
              % span)
        if again:
            check(again[0] - span[0] >= 2.5, "over: asked again %.2f s into the pause: before "
                  "it was 3 s stale" % (again[0] - span[0]))
            check(again[0] <= span[1] + 0.5, "over: asked again only at %.2f s, after the pause "
                  "(%.2f s)" % (again[0] - span[0], span[1] - span[0]))


if __name__ == "__main__":
    main((under, over))
