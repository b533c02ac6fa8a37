/*
 * What the MAVLink driver's files share: the vehicle's validated telemetry
 * (mavlink_telemetry.c), the frame conversions (mavlink_nav.c), the driver
 * itself (mavlink.c: the drone interface; mavlink_fly.c: commands, modes,
 * arming and targets). Numbers from common.xml.
 */
#ifndef ALOFT_DRONE_MAVLINK_INTERNAL_H
#define ALOFT_DRONE_MAVLINK_INTERNAL_H

#include "drone/mavlink.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

enum {
    MAV_AUTOPILOT_ARDUPILOTMEGA = 3,
    MAV_AUTOPILOT_PX4 = 12,
    MAV_TYPE_GCS = 6,
    MAV_AUTOPILOT_INVALID = 8,
    MAV_STATE_ACTIVE = 4,
    MAV_MODE_FLAG_CUSTOM_MODE_ENABLED = 1,
    MAV_MODE_FLAG_SAFETY_ARMED = 128,
    MAV_FRAME_LOCAL_NED = 1,
};

enum {
    MAV_LANDED_STATE_UNDEFINED = 0,
    MAV_LANDED_STATE_ON_GROUND = 1,
    MAV_LANDED_STATE_IN_AIR = 2,
    MAV_LANDED_STATE_TAKEOFF = 3,
    MAV_LANDED_STATE_LANDING = 4,
};

enum {
    MAV_CMD_NAV_LAND = 21,
    MAV_CMD_NAV_TAKEOFF = 22,
    MAV_CMD_DO_SET_MODE = 176,
    MAV_CMD_COMPONENT_ARM_DISARM = 400,
    MAV_CMD_SET_MESSAGE_INTERVAL = 511,
};

enum {
    MAV_RESULT_ACCEPTED = 0,
    MAV_RESULT_IN_PROGRESS = 5,
};

/* PX4's custom mode: main mode in bits 16-23, sub mode in bits 24-31. */
enum { PX4_MAIN_AUTO = 4, PX4_MAIN_OFFBOARD = 6, PX4_SUB_AUTO_LOITER = 3, PX4_SUB_AUTO_LAND = 6 };
enum { ARDUCOPTER_GUIDED = 4, ARDUCOPTER_LAND = 9 };

#define MAVLINK_ACKS 8

/* A point in the vehicle's local NED frame, metres. */
typedef struct mavlink_ned {
    double x, y, z;
} mavlink_ned;

/* Everything the vehicle told us, each value checked where it enters: a
 * field whose last report was not finite or out of physical range is not
 * valid (and keeps its last good value). */
typedef struct mavlink_telemetry {
    double heard_ms; /* when the last frame but a COMMAND_ACK came (0: never) */
    unsigned long frames;
    bool heartbeat;
    uint8_t compid; /* the autopilot's component id, from its HEARTBEAT */
    uint8_t autopilot, type, base_mode, system_status;
    uint32_t custom_mode;
    bool have_pos, pos_valid, z_valid;
    mavlink_ned pos;
    double vx, vy, vz; /* m/s, NED */
    double pos_ms;     /* when POS came */
    bool have_att, yaw_valid, tilt_valid;
    double yaw_deg; /* compass, [0, 360) */
    double roll_deg, pitch_deg;
    bool battery_valid, battery_status_seen;
    int battery;      /* percent */
    int landed;       /* MAV_LANDED_STATE_* */
    bool landed_seen; /* an EXTENDED_SYS_STATE came (some firmware sends none) */
    bool have_home;
    mavlink_ned home;
    /* GLOBAL_POSITION_INT's height above home, metres, and when it came:
     * with LOCAL_POSITION_NED's z it gives home's level in the local frame
     * (ArduPilot's HOME_POSITION says x = y = z = 0 in many releases). */
    bool have_rel_alt;
    double rel_alt, rel_alt_ms;
    /* The last MAVLINK_ACKS COMMAND_ACKs (ACK_SEQ counts them; ack number
     * N is at N % MAVLINK_ACKS): a waiter that wakes after two answers
     * still finds its own. */
    unsigned ack_seq;
    uint16_t ack_cmd[MAVLINK_ACKS];
    uint8_t ack_result[MAVLINK_ACKS];
    /* the last STATUSTEXT, printable; the last one that said why arming
     * is refused ("PreArm: ...", "Arm: ...") */
    unsigned text_seq;
    char text[64];
    uint8_t text_severity;
    char prearm[64];
    double prearm_ms;
} mavlink_telemetry;

/* Takes frame F (of the vehicle) into T at time NOW_MS. */
void mavlink_telemetry_apply(mavlink_telemetry *t, const mav_frame *f, double now_ms);

/* Home's level (NED z, metres) in the vehicle's local frame, into *Z:
 * from GLOBAL_POSITION_INT's height above home beside a position of the
 * same moment (within a second), else HOME_POSITION's z. False when
 * neither is known. */
bool mavlink_home_level(const mavlink_telemetry *t, double *z);

/* Is the vehicle armed? flying with the PX4 offboard / ArduPilot GUIDED? */
bool mavlink_armed(const mavlink_telemetry *t);
bool mavlink_in_guided_mode(const mavlink_telemetry *t);

/* ---- frames (mavlink_nav.c) ---- */

/* World pose (SPEC §3, cm, compass yaw) of NED point P seen from ORIGIN. */
drone_pose mavlink_world_from_ned(const mavlink_ned *origin, const mavlink_ned *p, double yaw_deg);

/* The NED point of world pose W (its x, y, z) seen from ORIGIN. */
mavlink_ned mavlink_ned_from_world(const mavlink_ned *origin, const drone_pose *w);

/* A compass heading as MAVLink's yaw: radians in (-pi, pi], 0 north,
 * clockwise positive. */
float mavlink_yaw_rad(double compass_deg);

/* PX4's custom_mode for MAIN and SUB. */
uint32_t mavlink_px4_mode(int main_mode, int sub_mode);

/* "OFFBOARD", "GUIDED", "AUTO.LAND", ... or "mode N" for the record. */
const char *mavlink_mode_name(uint8_t autopilot, uint32_t custom_mode, char *buf, size_t len);

/* MAV_RESULT_* as text. */
const char *mavlink_result_name(int result);

/* ---- the driver ---- */

#define MAVLINK_STREAMS 7 /* the telemetry streams asked for (mavlink_fly.c) */

typedef struct mavlink_drv {
    drone base;
    mavlink_config cfg;
    mavlink_sub *sub;
    pthread_mutex_t lock; /* tm, target, streaming, flying, lost */
    pthread_cond_t cond;  /* signalled on each frame */
    mavlink_telemetry tm;
    double stream_ms[MAVLINK_STREAMS]; /* when each stream was last heard */
    mavlink_ned origin;                /* where connect found the vehicle ready */
    bool have_origin;
    bool streaming;             /* the ticker sends TARGET at 10 Hz */
    mav_position_target target; /* NED, yaw in radians */
    drone_pose goal;            /* the last target reached (world), the base of the next motion */
    bool have_goal;
    bool flying;
    /* Up at the take-off height (or found flying at connect): the watch on
     * the measured state judges from here on; the climb from the ground
     * through the floor of the band is no excursion. */
    bool up;
    bool landing; /* the autopilot accepted MAV_CMD_NAV_LAND: it lands by itself */
    bool lost;    /* the link fell silent: every call fails */
    pthread_t ticker;
    bool ticker_started;
    volatile int stop;
    char name[320]; /* "mavlink:URL", for messages */
} mavlink_drv;

/* mavlink_fly.c */
/* A progress line ("mavlink: ...") on cfg.progress, if any. */
void mavlink_progress(mavlink_drv *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool mavlink_aborted(mavlink_drv *m);
int mavlink_send_command(mavlink_drv *m, uint16_t cmd, const float param[7], char *err,
                         size_t errlen);
int mavlink_send_command_confirm(mavlink_drv *m, uint16_t cmd, const float param[7],
                                 int confirmation, char *err, size_t errlen);
/* Sends command CMD until the autopilot answers (or, DONE given, the
 * vehicle shows it done: a lost ACK), up to 8 times (once when HURRY).
 * Returns 0 when accepted, else -1 with the result and the autopilot's
 * latest warning text. */
int mavlink_command(mavlink_drv *m, uint16_t cmd, const float param[7], const char *what,
                    bool (*done)(mavlink_drv *m, void *ud), bool hurry, char *err, size_t errlen);
int mavlink_request_streams(mavlink_drv *m, char *err, size_t errlen);
/* The slot of MSGID among the streams asked for, or -1. */
int mavlink_stream_slot(uint32_t msgid);
/* Whether the stream of SLOT, last heard at SEEN (0: never), is to be asked
 * for again at NOW (clock_now_ms). */
bool mavlink_stream_stale(int slot, double seen, double now);
/* Asks again for every stream not heard for a while (stream_ms). */
void mavlink_refresh_streams(mavlink_drv *m);
int mavlink_set_mode_guided(mavlink_drv *m, char *err, size_t errlen);
int mavlink_arm(mavlink_drv *m, char *err, size_t errlen);
/* Disarms the vehicle on the ground (never forced; a few quick tries). */
int mavlink_disarm(mavlink_drv *m, char *err, size_t errlen);
void mavlink_hold_here(mavlink_drv *m);
int mavlink_set_target(mavlink_drv *m, const drone_pose *world, char *err, size_t errlen);
int mavlink_send_target(mavlink_drv *m, char *err, size_t errlen);
/* Waits (up to LIMIT_MS) until DONE(m, ud) says yes under the lock; polls
 * the abort callback when POLL_ABORT and the link's silence always.
 * Returns 0, or -1 with "cancelled", the silence or "timed out: WHAT". */
int mavlink_wait(mavlink_drv *m, bool (*done)(mavlink_drv *m, void *ud), void *ud, double limit_ms,
                 bool poll_abort, const char *what, char *err, size_t errlen);
/* The world pose now (under the lock). */
drone_state mavlink_state_locked(mavlink_drv *m);

#endif
