/*
 * When the MAVLink driver asks again for a telemetry stream
 * (host/drone/mavlink_fly.c, mavlink_stream_stale): a stream not heard for
 * more than 3 s, or five of its intervals when that is longer, or never
 * heard. At the limit, just inside and just outside it, for a fast stream
 * (LOCAL_POSITION_NED, 100 ms: the 3 s floor rules) and a slow one
 * (HOME_POSITION, 2 s: five intervals, 10 s). The driver looks every 2 s;
 * tests/test_mavlink_streams.py checks the whole against the emulator.
 * labels: mavlink
 */
#include "drone/mavlink_internal.h"

#include "check.h"

static void check_stream(uint32_t msgid, double limit_ms)
{
    int slot = mavlink_stream_slot(msgid);
    CHECK(slot >= 0, "message %u is a stream asked for", (unsigned)msgid);
    if (slot < 0) return;
    const double seen = 50000;
    CHECK(!mavlink_stream_stale(slot, seen, seen), "msg %u: just heard", (unsigned)msgid);
    CHECK(!mavlink_stream_stale(slot, seen, seen + limit_ms - 1), "msg %u: just inside",
          (unsigned)msgid);
    CHECK(!mavlink_stream_stale(slot, seen, seen + limit_ms), "msg %u: at the limit",
          (unsigned)msgid);
    CHECK(mavlink_stream_stale(slot, seen, seen + limit_ms + 1), "msg %u: just outside",
          (unsigned)msgid);
    CHECK(mavlink_stream_stale(slot, 0, seen), "msg %u: never heard", (unsigned)msgid);
}

int main(void)
{
    check_stream(MAV_MSG_LOCAL_POSITION_NED, 3000);
    check_stream(MAV_MSG_GLOBAL_POSITION_INT, 3000); /* 250 ms: five are 1.25 s */
    check_stream(MAV_MSG_BATTERY_STATUS, 5000);      /* 1 s: five are 5 s */
    check_stream(MAV_MSG_HOME_POSITION, 10000);
    CHECK(mavlink_stream_slot(MAV_MSG_HEARTBEAT) < 0, "the HEARTBEAT is no stream asked for");
    return failures ? 1 : 0;
}
