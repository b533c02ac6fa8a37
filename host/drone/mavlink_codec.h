/*
 * MAVLink framing and the messages the MAVLink driver needs, written from the
 * public definitions (message_definitions/v1.0 minimal.xml, standard.xml and
 * common.xml of the MAVLink project; the serialization guide on mavlink.io).
 *
 * Wire format. MAVLink 2 (what we send):
 *   0xFD len incompat compat seq sysid compid msgid(3, LE) payload(len) crc(2)
 *   [signature(13) when incompat & 0x01]
 * MAVLink 1 (accepted on input):
 *   0xFE len seq sysid compid msgid(1) payload(len) crc(2)
 * The CRC is CRC-16/MCRF4XX (X.25 polynomial, seed 0xFFFF) over every byte
 * after the magic up to the end of the payload, then over the message's
 * CRC_EXTRA byte, which a sender and receiver of different definitions of a
 * message therefore never agree on. Payload fields are little-endian in wire
 * order: the original fields sorted by type size, largest first (stable),
 * then the extension fields in their declared order. A MAVLink 2 sender cuts
 * trailing zero bytes from the payload (never the first byte); a receiver
 * fills what is missing with zeros.
 *
 * Nothing here allocates or keeps global state; a parser is one struct.
 */
#ifndef ALOFT_DRONE_MAVLINK_CODEC_H
#define ALOFT_DRONE_MAVLINK_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAV_MAGIC_V1 0xFE
#define MAV_MAGIC_V2 0xFD
#define MAV_MAX_PAYLOAD 255
#define MAV_SIGNATURE_LEN 13
#define MAV_INCOMPAT_SIGNED 0x01
/* A whole MAVLink 2 frame with signature: 10 header, payload, 2 crc, 13. */
#define MAV_MAX_FRAME (10 + MAV_MAX_PAYLOAD + 2 + MAV_SIGNATURE_LEN)

/* Message ids (common.xml). */
enum {
    MAV_MSG_HEARTBEAT = 0,
    MAV_MSG_SYS_STATUS = 1,
    MAV_MSG_SET_MODE = 11,
    MAV_MSG_ATTITUDE = 30,
    MAV_MSG_LOCAL_POSITION_NED = 32,
    MAV_MSG_GLOBAL_POSITION_INT = 33,
    MAV_MSG_COMMAND_LONG = 76,
    MAV_MSG_COMMAND_ACK = 77,
    MAV_MSG_SET_POSITION_TARGET_LOCAL_NED = 84,
    MAV_MSG_POSITION_TARGET_LOCAL_NED = 85,
    MAV_MSG_BATTERY_STATUS = 147,
    MAV_MSG_HOME_POSITION = 242,
    MAV_MSG_EXTENDED_SYS_STATE = 245,
    MAV_MSG_STATUSTEXT = 253,
};

/* One received frame. The payload is zero-extended to MAV_MAX_PAYLOAD, so an
 * unpacker may read any field of its message whatever LEN the sender cut it
 * to. */
typedef struct mav_frame {
    uint8_t version; /* 1 or 2 */
    uint8_t len;     /* payload bytes as received */
    uint8_t incompat, compat;
    uint8_t seq, sysid, compid;
    uint32_t msgid;
    uint8_t payload[MAV_MAX_PAYLOAD];
} mav_frame;

/* Counters of a parser: what it kept and what it threw away. */
typedef struct mav_parser_stats {
    unsigned long frames;      /* frames returned */
    unsigned long crc_errors;  /* frames dropped: checksum wrong */
    unsigned long unknown;     /* frames skipped: message id we have no definition of */
    unsigned long signed_drop; /* frames dropped: signed (we hold no key to check them) */
    unsigned long bad_flags;   /* frames dropped: incompatibility flags we do not know */
    unsigned long skipped;     /* bytes skipped looking for a frame start */
} mav_parser_stats;

/*
 * A streaming parser for a byte stream that may hold anything besides
 * frames (boot text on a serial or TCP link, line noise). It looks for a
 * magic byte; when the candidate frame's checksum fails it drops only that
 * byte and looks again from the next, so a false start inside garbage never
 * hides a real frame behind it. A frame of an unknown message id cannot be
 * checked: it is skipped whole when a frame follows it (see mavlink_codec.c).
 */
typedef struct mav_parser {
    uint8_t buf[2 * MAV_MAX_FRAME];
    size_t have;
    mav_parser_stats stats;
} mav_parser;

void mav_parser_init(mav_parser *p);

/* Appends up to LEN bytes of DATA; returns how many it took (fewer when its
 * buffer is full: call mav_parser_next until it returns 0, then push the
 * rest). */
size_t mav_parser_push(mav_parser *p, const uint8_t *data, size_t len);

/* Takes the next valid frame out of the buffered bytes into OUT: 1, or 0
 * when the bytes buffered hold no whole frame yet. */
int mav_parser_next(mav_parser *p, mav_frame *out);

/* CRC-16/MCRF4XX, as MAVLink accumulates it. */
uint16_t mav_crc_accumulate(uint8_t byte, uint16_t crc);
uint16_t mav_crc(const uint8_t *data, size_t len, uint16_t crc);

/* The definition of message MSGID: CRC_EXTRA and the length without and with
 * its extensions. Returns false for a message we do not know. */
bool mav_msg_known(uint32_t msgid, uint8_t *crc_extra, uint8_t *min_len, uint8_t *max_len);

/* Who sends a frame and its sequence number. */
typedef struct mav_sender {
    uint8_t sysid, compid;
    uint8_t seq;
} mav_sender;

/*
 * Frames LEN bytes of PAYLOAD as message MSGID in MAVLink 2, unsigned, with
 * trailing zeros cut, into OUT (at least MAV_MAX_FRAME bytes). Returns the
 * frame's length, or 0 when MSGID is unknown (no CRC_EXTRA to seal it).
 */
size_t mav_frame_encode(uint8_t *out, const mav_sender *s, uint32_t msgid, const uint8_t *payload,
                        size_t len);

/* ---- messages ------------------------------------------------------------
 * Field names and units as in common.xml. Every struct packs to the payload
 * of its message with mav_*_pack (returns the payload length, extensions
 * included) and unpacks with mav_*_unpack (-1 when the frame is another
 * message, else 0). Unpacking does not judge values: floats may be NaN. */

typedef struct mav_heartbeat {
    uint32_t custom_mode;
    uint8_t type, autopilot, base_mode, system_status, mavlink_version;
} mav_heartbeat;

typedef struct mav_sys_status {
    uint32_t sensors_present, sensors_enabled, sensors_health;
    uint16_t load;            /* d% */
    uint16_t voltage_battery; /* mV, UINT16_MAX unknown */
    int16_t current_battery;  /* cA, -1 unknown */
    uint16_t drop_rate_comm, errors_comm;
    uint16_t errors_count[4];
    int8_t battery_remaining; /* %, -1 unknown */
    uint32_t sensors_present_ext, sensors_enabled_ext, sensors_health_ext;
} mav_sys_status;

typedef struct mav_battery_status {
    int32_t current_consumed; /* mAh */
    int32_t energy_consumed;  /* hJ */
    int16_t temperature;      /* cdegC */
    uint16_t voltages[10];    /* mV */
    int16_t current_battery;  /* cA */
    uint8_t id, battery_function, type;
    int8_t battery_remaining; /* %, -1 unknown */
    int32_t time_remaining;   /* s */
    uint8_t charge_state;
    uint16_t voltages_ext[4];
    uint8_t mode;
    uint32_t fault_bitmask;
} mav_battery_status;

typedef struct mav_attitude {
    uint32_t time_boot_ms;
    float roll, pitch, yaw; /* rad */
    float rollspeed, pitchspeed, yawspeed;
} mav_attitude;

typedef struct mav_local_position_ned {
    uint32_t time_boot_ms;
    float x, y, z; /* m, north east down */
    float vx, vy, vz;
} mav_local_position_ned;

typedef struct mav_global_position_int {
    uint32_t time_boot_ms;
    int32_t lat, lon;     /* degE7 */
    int32_t alt;          /* mm AMSL */
    int32_t relative_alt; /* mm above home */
    int16_t vx, vy, vz;   /* cm/s */
    uint16_t hdg;         /* cdeg, UINT16_MAX unknown */
} mav_global_position_int;

typedef struct mav_home_position {
    int32_t latitude, longitude, altitude;
    float x, y, z; /* m, local NED */
    float q[4];
    float approach_x, approach_y, approach_z;
    uint64_t time_usec;
} mav_home_position;

typedef struct mav_extended_sys_state {
    uint8_t vtol_state, landed_state;
} mav_extended_sys_state;

typedef struct mav_command_long {
    float param[7];
    uint16_t command;
    uint8_t target_system, target_component, confirmation;
} mav_command_long;

typedef struct mav_command_ack {
    uint16_t command;
    uint8_t result, progress;
    int32_t result_param2;
    uint8_t target_system, target_component;
} mav_command_ack;

typedef struct mav_set_mode {
    uint32_t custom_mode;
    uint8_t target_system, base_mode;
} mav_set_mode;

/* SET_POSITION_TARGET_LOCAL_NED; POSITION_TARGET_LOCAL_NED, the vehicle's
 * echo of the target it follows, is the same without the two targets. */
typedef struct mav_position_target {
    uint32_t time_boot_ms;
    float x, y, z, vx, vy, vz, afx, afy, afz, yaw, yaw_rate;
    uint16_t type_mask;
    uint8_t target_system, target_component, coordinate_frame;
} mav_position_target;

typedef struct mav_statustext {
    uint8_t severity;
    char text[51]; /* up to 50 bytes from the wire, always NUL-terminated */
    uint16_t id;
    uint8_t chunk_seq;
} mav_statustext;

#define MAV_DECLARE_AS(name, type)                                                                 \
    size_t mav_##name##_pack(const type *m, uint8_t payload[MAV_MAX_PAYLOAD]);                     \
    int mav_##name##_unpack(const mav_frame *f, type *out)
#define MAV_DECLARE(name) MAV_DECLARE_AS(name, mav_##name)

MAV_DECLARE(heartbeat);
MAV_DECLARE(sys_status);
MAV_DECLARE(battery_status);
MAV_DECLARE(attitude);
MAV_DECLARE(local_position_ned);
MAV_DECLARE(global_position_int);
MAV_DECLARE(home_position);
MAV_DECLARE(extended_sys_state);
MAV_DECLARE(command_long);
MAV_DECLARE(command_ack);
MAV_DECLARE(set_mode);
MAV_DECLARE(statustext);
/* The two position-target messages share mav_position_target. */
MAV_DECLARE_AS(set_position_target, mav_position_target);
MAV_DECLARE_AS(position_target, mav_position_target);
#undef MAV_DECLARE
#undef MAV_DECLARE_AS

#endif
