/*
 * The Tello's state string (SDK 2.0, and the SDK 3.0 / Tello EDU variant
 * that starts with mission-pad fields), e.g.
 *   pitch:0;roll:0;yaw:-45;vgx:0;vgy:0;vgz:0;templ:60;temph:62;tof:10;h:0;
 *   bat:87;baro:182.54;time:0;agx:-1.00;agy:0.00;agz:-998.00;\r\n
 *   mid:-1;x:-100;y:-100;z:-100;mpry:0,0,0;pitch:0;...
 * Units as the drone sends them: degrees, dm/s for vg*, cm for tof and h,
 * percent, metres for baro, seconds of motor time, 0.001 g for ag*.
 */
#ifndef ALOFT_DRONE_TELLO_STATE_H
#define ALOFT_DRONE_TELLO_STATE_H

#include <stdbool.h>
#include <stddef.h>

/* Bits of tello_sdk_state.fields: which keys the string carried. */
enum {
    TELLO_F_PITCH = 1 << 0,
    TELLO_F_ROLL = 1 << 1,
    TELLO_F_YAW = 1 << 2,
    TELLO_F_VGX = 1 << 3,
    TELLO_F_VGY = 1 << 4,
    TELLO_F_VGZ = 1 << 5,
    TELLO_F_TEMPL = 1 << 6,
    TELLO_F_TEMPH = 1 << 7,
    TELLO_F_TOF = 1 << 8,
    TELLO_F_H = 1 << 9,
    TELLO_F_BAT = 1 << 10,
    TELLO_F_BARO = 1 << 11,
    TELLO_F_TIME = 1 << 12,
    TELLO_F_AGX = 1 << 13,
    TELLO_F_AGY = 1 << 14,
    TELLO_F_AGZ = 1 << 15,
    TELLO_F_MID = 1 << 16,
    TELLO_F_MX = 1 << 17,
    TELLO_F_MY = 1 << 18,
    TELLO_F_MZ = 1 << 19,
    TELLO_F_MPRY = 1 << 20,
};

typedef struct tello_sdk_state {
    unsigned fields; /* TELLO_F_* present */
    double pitch, roll, yaw;
    double vgx, vgy, vgz;
    double templ, temph;
    double tof, h, bat, baro, time;
    double agx, agy, agz;
    /* SDK 3.0 mission pad: id (-1 = none seen) and the pose relative to it. */
    double mid, mx, my, mz;
    double mpry[3];
} tello_sdk_state;

/*
 * Parses one state datagram of LEN bytes (not NUL-terminated) into OUT.
 * Keys may come in any order; unknown keys are skipped so that newer
 * firmware still parses. Returns 0, or -1 if the text is not a state string
 * (a segment without ':', a known key with a malformed number, or one of
 * bat, h and yaw missing).
 */
int tello_state_parse(const char *text, size_t len, tello_sdk_state *out);

/*
 * Validates S where it enters (SPEC §9): every field that is not finite or
 * lies outside what a Tello can physically report (e.g. a yaw beyond
 * +-360 degrees, a height beyond 100 m, a battery outside 0-100 %) is
 * dropped from S->fields and its value set to 0, so that nothing downstream
 * reads it as a number. Returns the TELLO_F_* bits dropped.
 */
unsigned tello_state_validate(tello_sdk_state *s);

/* True if V is a battery percentage: finite and in [0, 100]. Checked before
 * any conversion to int. */
bool tello_battery_valid(double v);

#endif
