/*
 * MAVLink framing, the streaming parser and the message layouts (see
 * mavlink_codec.h). Each message is a table of its fields in wire order, so
 * one packer and one unpacker serve every message and a layout reads as the
 * definition it was written from.
 */
#include "drone/mavlink_codec.h"

#include <stddef.h>
#include <string.h>

/* ---- CRC ------------------------------------------------------------------ */

uint16_t mav_crc_accumulate(uint8_t byte, uint16_t crc)
{
    uint8_t t = (uint8_t)(byte ^ (uint8_t)(crc & 0xff));
    t = (uint8_t)(t ^ (uint8_t)(t << 4));
    return (uint16_t)((crc >> 8) ^ ((uint16_t)t << 8) ^ ((uint16_t)t << 3) ^ (t >> 4));
}

uint16_t mav_crc(const uint8_t *data, size_t len, uint16_t crc)
{
    for (size_t i = 0; i < len; i++)
        crc = mav_crc_accumulate(data[i], crc);
    return crc;
}

/* ---- message layouts -------------------------------------------------------- */

typedef enum field_type { U8, I8, CH, U16, I16, U32, I32, F32, U64 } field_type;

typedef struct mav_field {
    field_type type;
    uint8_t count;   /* array length, 1 for a scalar */
    uint16_t offset; /* of the member in the message's struct */
} mav_field;

typedef struct mav_msg_def {
    uint32_t id;
    uint8_t crc_extra, min_len, max_len;
    const mav_field *fields; /* wire order, extensions last */
    size_t nfields;
} mav_msg_def;

/* F(member, type) and A(member, type, count) are the fields of the
 * message struct MSG, which each table below defines for itself. */
#define F(member, type)                                                                            \
    {                                                                                              \
        type, 1, (uint16_t)offsetof(MSG, member)                                                   \
    }
#define A(member, type, n)                                                                         \
    {                                                                                              \
        type, n, (uint16_t)offsetof(MSG, member)                                                   \
    }

#define MSG mav_heartbeat
static const mav_field heartbeat_f[] = {
    F(custom_mode, U32), F(type, U8),          F(autopilot, U8),
    F(base_mode, U8),    F(system_status, U8), F(mavlink_version, U8),
};
#undef MSG

#define MSG mav_sys_status
static const mav_field sys_status_f[] = {
    F(sensors_present, U32),
    F(sensors_enabled, U32),
    F(sensors_health, U32),
    F(load, U16),
    F(voltage_battery, U16),
    F(current_battery, I16),
    F(drop_rate_comm, U16),
    F(errors_comm, U16),
    A(errors_count, U16, 4),
    F(battery_remaining, I8),
    /* extensions */
    F(sensors_present_ext, U32),
    F(sensors_enabled_ext, U32),
    F(sensors_health_ext, U32),
};
#undef MSG

#define MSG mav_set_mode
static const mav_field set_mode_f[] = {
    F(custom_mode, U32),
    F(target_system, U8),
    F(base_mode, U8),
};
#undef MSG

#define MSG mav_attitude
static const mav_field attitude_f[] = {
    F(time_boot_ms, U32), F(roll, F32),       F(pitch, F32),    F(yaw, F32),
    F(rollspeed, F32),    F(pitchspeed, F32), F(yawspeed, F32),
};
#undef MSG

#define MSG mav_local_position_ned
static const mav_field local_position_ned_f[] = {
    F(time_boot_ms, U32), F(x, F32), F(y, F32), F(z, F32), F(vx, F32), F(vy, F32), F(vz, F32),
};
#undef MSG

#define MSG mav_global_position_int
static const mav_field global_position_int_f[] = {
    F(time_boot_ms, U32), F(lat, I32), F(lon, I32), F(alt, I32), F(relative_alt, I32),
    F(vx, I16),           F(vy, I16),  F(vz, I16),  F(hdg, U16),
};
#undef MSG

#define MSG mav_command_long
static const mav_field command_long_f[] = {
    A(param, F32, 7),        F(command, U16),     F(target_system, U8),
    F(target_component, U8), F(confirmation, U8),
};
#undef MSG

#define MSG mav_command_ack
static const mav_field command_ack_f[] = {
    F(command, U16),
    F(result, U8),
    /* extensions */
    F(progress, U8),
    F(result_param2, I32),
    F(target_system, U8),
    F(target_component, U8),
};
#undef MSG

#define TARGET_FLOATS                                                                              \
    F(time_boot_ms, U32), F(x, F32), F(y, F32), F(z, F32), F(vx, F32), F(vy, F32), F(vz, F32),     \
        F(afx, F32), F(afy, F32), F(afz, F32), F(yaw, F32), F(yaw_rate, F32), F(type_mask, U16)

#define MSG mav_position_target
static const mav_field set_position_target_f[] = {
    TARGET_FLOATS,
    F(target_system, U8),
    F(target_component, U8),
    F(coordinate_frame, U8),
};

static const mav_field position_target_f[] = {
    TARGET_FLOATS,
    F(coordinate_frame, U8),
};
#undef MSG

#define MSG mav_battery_status
static const mav_field battery_status_f[] = {
    F(current_consumed, I32),
    F(energy_consumed, I32),
    F(temperature, I16),
    A(voltages, U16, 10),
    F(current_battery, I16),
    F(id, U8),
    F(battery_function, U8),
    F(type, U8),
    F(battery_remaining, I8),
    /* extensions */
    F(time_remaining, I32),
    F(charge_state, U8),
    A(voltages_ext, U16, 4),
    F(mode, U8),
    F(fault_bitmask, U32),
};
#undef MSG

#define MSG mav_home_position
static const mav_field home_position_f[] = {
    F(latitude, I32),
    F(longitude, I32),
    F(altitude, I32),
    F(x, F32),
    F(y, F32),
    F(z, F32),
    A(q, F32, 4),
    F(approach_x, F32),
    F(approach_y, F32),
    F(approach_z, F32),
    /* extensions */
    F(time_usec, U64),
};
#undef MSG

#define MSG mav_extended_sys_state
static const mav_field extended_sys_state_f[] = {
    F(vtol_state, U8),
    F(landed_state, U8),
};
#undef MSG

#define MSG mav_statustext
static const mav_field statustext_f[] = {
    F(severity, U8),
    A(text, CH, 50),
    /* extensions */
    F(id, U16),
    F(chunk_seq, U8),
};
#undef MSG

#define DEF(id, extra, minl, maxl, f)                                                              \
    {                                                                                              \
        id, extra, minl, maxl, f, sizeof f / sizeof f[0]                                           \
    }

/* CRC_EXTRA and lengths computed from the XML definitions by the rule of the
 * serialization guide (message name, then each original field's type and
 * name in wire order, and an array's length). */
static const mav_msg_def defs[] = {
    DEF(MAV_MSG_HEARTBEAT, 50, 9, 9, heartbeat_f),
    DEF(MAV_MSG_SYS_STATUS, 124, 31, 43, sys_status_f),
    DEF(MAV_MSG_SET_MODE, 89, 6, 6, set_mode_f),
    DEF(MAV_MSG_ATTITUDE, 39, 28, 28, attitude_f),
    DEF(MAV_MSG_LOCAL_POSITION_NED, 185, 28, 28, local_position_ned_f),
    DEF(MAV_MSG_GLOBAL_POSITION_INT, 104, 28, 28, global_position_int_f),
    DEF(MAV_MSG_COMMAND_LONG, 152, 33, 33, command_long_f),
    DEF(MAV_MSG_COMMAND_ACK, 143, 3, 10, command_ack_f),
    DEF(MAV_MSG_SET_POSITION_TARGET_LOCAL_NED, 143, 53, 53, set_position_target_f),
    DEF(MAV_MSG_POSITION_TARGET_LOCAL_NED, 140, 51, 51, position_target_f),
    DEF(MAV_MSG_BATTERY_STATUS, 154, 36, 54, battery_status_f),
    DEF(MAV_MSG_HOME_POSITION, 104, 52, 60, home_position_f),
    DEF(MAV_MSG_EXTENDED_SYS_STATE, 130, 2, 2, extended_sys_state_f),
    DEF(MAV_MSG_STATUSTEXT, 83, 51, 54, statustext_f),
};

static const mav_msg_def *def_of(uint32_t msgid)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (defs[i].id == msgid) return &defs[i];
    return NULL;
}

bool mav_msg_known(uint32_t msgid, uint8_t *crc_extra, uint8_t *min_len, uint8_t *max_len)
{
    const mav_msg_def *d = def_of(msgid);
    if (!d) return false;
    if (crc_extra) *crc_extra = d->crc_extra;
    if (min_len) *min_len = d->min_len;
    if (max_len) *max_len = d->max_len;
    return true;
}

static size_t type_size(field_type t)
{
    switch (t) {
    case U8:
    case I8:
    case CH: return 1;
    case U16:
    case I16: return 2;
    case U32:
    case I32:
    case F32: return 4;
    case U64: return 8;
    }
    return 0;
}

/* Little-endian on the wire whatever the host's order: the value goes
 * through an integer of its size. */
static void put_le(uint8_t *dst, const uint8_t *member, size_t size)
{
    uint64_t v = 0;
    switch (size) {
    case 1: v = member[0]; break;
    case 2: {
        uint16_t x;
        memcpy(&x, member, 2);
        v = x;
        break;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, member, 4);
        v = x;
        break;
    }
    default: memcpy(&v, member, 8); break;
    }
    for (size_t i = 0; i < size; i++)
        dst[i] = (uint8_t)(v >> (8 * i));
}

static void get_le(uint8_t *member, const uint8_t *src, size_t size)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++)
        v |= (uint64_t)src[i] << (8 * i);
    switch (size) {
    case 1: member[0] = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(member, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(member, &x, 4);
        break;
    }
    default: memcpy(member, &v, 8); break;
    }
}

static size_t pack_def(const mav_msg_def *d, const void *msg, uint8_t *payload)
{
    size_t at = 0;
    memset(payload, 0, MAV_MAX_PAYLOAD);
    for (size_t i = 0; i < d->nfields; i++) {
        size_t sz = type_size(d->fields[i].type);
        const uint8_t *m = (const uint8_t *)msg + d->fields[i].offset;
        for (unsigned k = 0; k < d->fields[i].count; k++, at += sz)
            put_le(payload + at, m + k * sz, sz);
    }
    return at;
}

static int unpack_def(const mav_msg_def *d, const mav_frame *f, void *msg, size_t size)
{
    if (f->msgid != d->id) return -1;
    memset(msg, 0, size);
    size_t at = 0;
    for (size_t i = 0; i < d->nfields; i++) {
        size_t sz = type_size(d->fields[i].type);
        uint8_t *m = (uint8_t *)msg + d->fields[i].offset;
        for (unsigned k = 0; k < d->fields[i].count; k++, at += sz)
            get_le(m + k * sz, f->payload + at, sz);
    }
    return 0;
}

/* mav_NAME_pack and mav_NAME_unpack of message ID, whose struct is TYPE. */
#define MAV_DEFINE_AS(name, type, id)                                                              \
    size_t mav_##name##_pack(const type *m, uint8_t payload[MAV_MAX_PAYLOAD])                      \
    {                                                                                              \
        return pack_def(def_of(id), m, payload);                                                   \
    }                                                                                              \
    int mav_##name##_unpack(const mav_frame *f, type *out)                                         \
    {                                                                                              \
        return unpack_def(def_of(id), f, out, sizeof *out);                                        \
    }
#define MAV_DEFINE(name, id) MAV_DEFINE_AS(name, mav_##name, id)

MAV_DEFINE(heartbeat, MAV_MSG_HEARTBEAT)
MAV_DEFINE(sys_status, MAV_MSG_SYS_STATUS)
MAV_DEFINE(battery_status, MAV_MSG_BATTERY_STATUS)
MAV_DEFINE(attitude, MAV_MSG_ATTITUDE)
MAV_DEFINE(local_position_ned, MAV_MSG_LOCAL_POSITION_NED)
MAV_DEFINE(global_position_int, MAV_MSG_GLOBAL_POSITION_INT)
MAV_DEFINE(home_position, MAV_MSG_HOME_POSITION)
MAV_DEFINE(extended_sys_state, MAV_MSG_EXTENDED_SYS_STATE)
MAV_DEFINE(command_long, MAV_MSG_COMMAND_LONG)
MAV_DEFINE(command_ack, MAV_MSG_COMMAND_ACK)
MAV_DEFINE(set_mode, MAV_MSG_SET_MODE)

size_t mav_statustext_pack(const mav_statustext *m, uint8_t payload[MAV_MAX_PAYLOAD])
{
    return pack_def(def_of(MAV_MSG_STATUSTEXT), m, payload);
}

/* The text is 50 bytes, NUL-padded, and not terminated when it fills them;
 * the struct's 51st byte stays zero so it always reads as a C string. */
int mav_statustext_unpack(const mav_frame *f, mav_statustext *out)
{
    int r = unpack_def(def_of(MAV_MSG_STATUSTEXT), f, out, sizeof *out);
    out->text[50] = '\0';
    return r;
}

/* The two position-target messages share one struct. */
MAV_DEFINE_AS(set_position_target, mav_position_target, MAV_MSG_SET_POSITION_TARGET_LOCAL_NED)
MAV_DEFINE_AS(position_target, mav_position_target, MAV_MSG_POSITION_TARGET_LOCAL_NED)

/* ---- framing ---------------------------------------------------------------- */

size_t mav_frame_encode(uint8_t *out, const mav_sender *s, uint32_t msgid, const uint8_t *payload,
                        size_t len)
{
    const mav_msg_def *d = def_of(msgid);
    if (!d || len > MAV_MAX_PAYLOAD) return 0;
    /* MAVLink 2 payload truncation: trailing zeros go, the first byte stays. */
    while (len > 1 && payload[len - 1] == 0)
        len--;
    out[0] = MAV_MAGIC_V2;
    out[1] = (uint8_t)len;
    out[2] = 0; /* incompat: unsigned */
    out[3] = 0; /* compat */
    out[4] = s->seq;
    out[5] = s->sysid;
    out[6] = s->compid;
    out[7] = (uint8_t)msgid;
    out[8] = (uint8_t)(msgid >> 8);
    out[9] = (uint8_t)(msgid >> 16);
    memcpy(out + 10, payload, len);
    uint16_t crc = mav_crc(out + 1, 9 + len, 0xffff);
    crc = mav_crc_accumulate(d->crc_extra, crc);
    out[10 + len] = (uint8_t)crc;
    out[11 + len] = (uint8_t)(crc >> 8);
    return 12 + len;
}

/* ---- parser ----------------------------------------------------------------- */

void mav_parser_init(mav_parser *p)
{
    memset(p, 0, sizeof *p);
}

size_t mav_parser_push(mav_parser *p, const uint8_t *data, size_t len)
{
    size_t room = sizeof p->buf - p->have;
    if (len > room) len = room;
    memcpy(p->buf + p->have, data, len);
    p->have += len;
    return len;
}

static void drop(mav_parser *p, size_t n)
{
    if (n > p->have) n = p->have;
    memmove(p->buf, p->buf + n, p->have - n);
    p->have -= n;
}

/* Drops every byte before the next magic. */
static void seek_magic(mav_parser *p)
{
    size_t i = 0;
    while (i < p->have && p->buf[i] != MAV_MAGIC_V2 && p->buf[i] != MAV_MAGIC_V1)
        i++;
    p->stats.skipped += i;
    drop(p, i);
}

/* The frame at the start of the buffer, known complete and CRC-checked,
 * into OUT. */
static void take_frame(const mav_parser *p, size_t hdr, mav_frame *out)
{
    const uint8_t *b = p->buf;
    memset(out, 0, sizeof *out);
    out->len = b[1];
    if (b[0] == MAV_MAGIC_V2) {
        out->version = 2;
        out->incompat = b[2], out->compat = b[3];
        out->seq = b[4], out->sysid = b[5], out->compid = b[6];
        out->msgid = (uint32_t)b[7] | (uint32_t)b[8] << 8 | (uint32_t)b[9] << 16;
    } else {
        out->version = 1;
        out->seq = b[2], out->sysid = b[3], out->compid = b[4];
        out->msgid = b[5];
    }
    memcpy(out->payload, b + hdr, out->len);
}

int mav_parser_next(mav_parser *p, mav_frame *out)
{
    for (;;) {
        seek_magic(p);
        if (p->have < 2) return 0;
        bool v2 = p->buf[0] == MAV_MAGIC_V2;
        size_t hdr = v2 ? 10 : 6;
        if (p->have < hdr) return 0;
        size_t len = p->buf[1];
        uint8_t incompat = v2 ? p->buf[2] : 0;
        uint32_t msgid =
            v2 ? (uint32_t)p->buf[7] | (uint32_t)p->buf[8] << 8 | (uint32_t)p->buf[9] << 16
               : p->buf[5];
        size_t total = hdr + len + 2 + ((incompat & MAV_INCOMPAT_SIGNED) ? MAV_SIGNATURE_LEN : 0);
        uint8_t extra;
        if (!mav_msg_known(msgid, &extra, NULL, NULL)) {
            /* Without its CRC_EXTRA the frame cannot be checked. Skip it
             * whole only when another frame starts right where its length
             * says it ends, as in a real stream; otherwise it may be a false
             * start in garbage whose length would swallow a real frame, so
             * drop the one byte. (A datagram's last frame waits here until
             * the link resets the parser for the next datagram.) */
            if (p->have < total + 1) return 0;
            uint8_t after = p->buf[total];
            if (after == MAV_MAGIC_V2 || after == MAV_MAGIC_V1) {
                p->stats.unknown++;
                drop(p, total);
            } else {
                p->stats.skipped++;
                drop(p, 1);
            }
            continue;
        }
        if (p->have < hdr + len + 2) return 0;
        uint16_t crc = mav_crc_accumulate(extra, mav_crc(p->buf + 1, hdr - 1 + len, 0xffff));
        uint16_t got = (uint16_t)(p->buf[hdr + len] | p->buf[hdr + len + 1] << 8);
        if (crc != got) {
            /* Perhaps no frame started here: look again from the next byte. */
            p->stats.crc_errors++;
            drop(p, 1);
            continue;
        }
        if (p->have < total) return 0;
        if (incompat & MAV_INCOMPAT_SIGNED) {
            p->stats.signed_drop++;
        } else if (incompat) {
            p->stats.bad_flags++;
        } else {
            take_frame(p, hdr, out);
            p->stats.frames++;
            drop(p, total);
            return 1;
        }
        drop(p, total);
    }
}
