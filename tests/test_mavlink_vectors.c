/*
 * aloft's MAVLink codec against node-mavlink, an implementation that is not
 * ours (tests/mavlink/vectors.js). node-mavlink writes frames of every
 * message the driver uses, in MAVLink 2 (truncated and whole) and MAVLink 1,
 * with the fields it decodes from them: our parser must find each frame and
 * our unpackers the same fields; our encoder, given those fields, must give
 * node-mavlink's MAVLink 2 bytes back; and node-mavlink must accept every
 * frame we encode and read the same fields from it. CRC_EXTRA and the
 * lengths of each message are compared too. make test installs node-mavlink
 * (scripts/setup.sh --test); without it this test fails and says so.
 * labels: mavlink
 */
#include "drone/mavlink_codec.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef enum { U8, I8, U16, I16, U32, I32, U64, F32, TEXT } ftype;

/* One field: its MAVLink name (or name of an array), where it is in our
 * struct, its type and how many (arrays). */
typedef struct field {
    const char *name;
    size_t off;
    ftype type;
    int count;
} field;

typedef struct message {
    const char *name;
    uint32_t id;
    size_t size;
    const field *fields;
    size_t (*pack)(const void *m, uint8_t *payload);
    int (*unpack)(const mav_frame *f, void *out);
} message;

#define WRAP(fn, T)                                                                                \
    static size_t fn##_p(const void *m, uint8_t *p)                                                \
    {                                                                                              \
        return mav_##fn##_pack((const T *)m, p);                                                   \
    }                                                                                              \
    static int fn##_u(const mav_frame *f, void *o)                                                 \
    {                                                                                              \
        return mav_##fn##_unpack(f, (T *)o);                                                       \
    }
WRAP(heartbeat, mav_heartbeat)
WRAP(sys_status, mav_sys_status)
WRAP(battery_status, mav_battery_status)
WRAP(attitude, mav_attitude)
WRAP(local_position_ned, mav_local_position_ned)
WRAP(global_position_int, mav_global_position_int)
WRAP(home_position, mav_home_position)
WRAP(extended_sys_state, mav_extended_sys_state)
WRAP(command_long, mav_command_long)
WRAP(command_ack, mav_command_ack)
WRAP(set_mode, mav_set_mode)
WRAP(set_position_target, mav_position_target)
WRAP(position_target, mav_position_target)
WRAP(statustext, mav_statustext)

#define F(S, json, member, type)                                                                   \
    {                                                                                              \
        json, offsetof(S, member), type, 1                                                         \
    }
#define A(S, json, member, type, n)                                                                \
    {                                                                                              \
        json, offsetof(S, member), type, n                                                         \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, 0, U8, 0                                                                             \
    }

static const field heartbeat_f[] = {F(mav_heartbeat, "custom_mode", custom_mode, U32),
                                    F(mav_heartbeat, "type", type, U8),
                                    F(mav_heartbeat, "autopilot", autopilot, U8),
                                    F(mav_heartbeat, "base_mode", base_mode, U8),
                                    F(mav_heartbeat, "system_status", system_status, U8),
                                    F(mav_heartbeat, "mavlink_version", mavlink_version, U8),
                                    END};
#define SS mav_sys_status
static const field sys_status_f[] = {
    F(SS, "onboard_control_sensors_present", sensors_present, U32),
    F(SS, "onboard_control_sensors_enabled", sensors_enabled, U32),
    F(SS, "onboard_control_sensors_health", sensors_health, U32),
    F(SS, "load", load, U16),
    F(SS, "voltage_battery", voltage_battery, U16),
    F(SS, "current_battery", current_battery, I16),
    F(SS, "drop_rate_comm", drop_rate_comm, U16),
    F(SS, "errors_comm", errors_comm, U16),
    F(SS, "errors_count1", errors_count[0], U16),
    F(SS, "errors_count2", errors_count[1], U16),
    F(SS, "errors_count3", errors_count[2], U16),
    F(SS, "errors_count4", errors_count[3], U16),
    F(SS, "battery_remaining", battery_remaining, I8),
    F(SS, "onboard_control_sensors_present_extended", sensors_present_ext, U32),
    F(SS, "onboard_control_sensors_enabled_extended", sensors_enabled_ext, U32),
    F(SS, "onboard_control_sensors_health_extended", sensors_health_ext, U32),
    END};
#define BS mav_battery_status
static const field battery_status_f[] = {F(BS, "current_consumed", current_consumed, I32),
                                         F(BS, "energy_consumed", energy_consumed, I32),
                                         F(BS, "temperature", temperature, I16),
                                         A(BS, "voltages", voltages, U16, 10),
                                         F(BS, "current_battery", current_battery, I16),
                                         F(BS, "id", id, U8),
                                         F(BS, "battery_function", battery_function, U8),
                                         F(BS, "type", type, U8),
                                         F(BS, "battery_remaining", battery_remaining, I8),
                                         F(BS, "time_remaining", time_remaining, I32),
                                         F(BS, "charge_state", charge_state, U8),
                                         A(BS, "voltages_ext", voltages_ext, U16, 4),
                                         F(BS, "mode", mode, U8),
                                         F(BS, "fault_bitmask", fault_bitmask, U32),
                                         END};
#define AT mav_attitude
static const field attitude_f[] = {F(AT, "time_boot_ms", time_boot_ms, U32),
                                   F(AT, "roll", roll, F32),
                                   F(AT, "pitch", pitch, F32),
                                   F(AT, "yaw", yaw, F32),
                                   F(AT, "rollspeed", rollspeed, F32),
                                   F(AT, "pitchspeed", pitchspeed, F32),
                                   F(AT, "yawspeed", yawspeed, F32),
                                   END};
#define LP mav_local_position_ned
static const field local_position_ned_f[] = {F(LP, "time_boot_ms", time_boot_ms, U32),
                                             F(LP, "x", x, F32),
                                             F(LP, "y", y, F32),
                                             F(LP, "z", z, F32),
                                             F(LP, "vx", vx, F32),
                                             F(LP, "vy", vy, F32),
                                             F(LP, "vz", vz, F32),
                                             END};
#define GP mav_global_position_int
static const field global_position_int_f[] = {F(GP, "time_boot_ms", time_boot_ms, U32),
                                              F(GP, "lat", lat, I32),
                                              F(GP, "lon", lon, I32),
                                              F(GP, "alt", alt, I32),
                                              F(GP, "relative_alt", relative_alt, I32),
                                              F(GP, "vx", vx, I16),
                                              F(GP, "vy", vy, I16),
                                              F(GP, "vz", vz, I16),
                                              F(GP, "hdg", hdg, U16),
                                              END};
#define HP mav_home_position
static const field home_position_f[] = {F(HP, "latitude", latitude, I32),
                                        F(HP, "longitude", longitude, I32),
                                        F(HP, "altitude", altitude, I32),
                                        F(HP, "x", x, F32),
                                        F(HP, "y", y, F32),
                                        F(HP, "z", z, F32),
                                        A(HP, "q", q, F32, 4),
                                        F(HP, "approach_x", approach_x, F32),
                                        F(HP, "approach_y", approach_y, F32),
                                        F(HP, "approach_z", approach_z, F32),
                                        F(HP, "time_usec", time_usec, U64),
                                        END};
static const field extended_sys_state_f[] = {
    F(mav_extended_sys_state, "vtol_state", vtol_state, U8),
    F(mav_extended_sys_state, "landed_state", landed_state, U8), END};
#define CL mav_command_long
static const field command_long_f[] = {F(CL, "param1", param[0], F32),
                                       F(CL, "param2", param[1], F32),
                                       F(CL, "param3", param[2], F32),
                                       F(CL, "param4", param[3], F32),
                                       F(CL, "param5", param[4], F32),
                                       F(CL, "param6", param[5], F32),
                                       F(CL, "param7", param[6], F32),
                                       F(CL, "command", command, U16),
                                       F(CL, "target_system", target_system, U8),
                                       F(CL, "target_component", target_component, U8),
                                       F(CL, "confirmation", confirmation, U8),
                                       END};
#define CA mav_command_ack
static const field command_ack_f[] = {F(CA, "command", command, U16),
                                      F(CA, "result", result, U8),
                                      F(CA, "progress", progress, U8),
                                      F(CA, "result_param2", result_param2, I32),
                                      F(CA, "target_system", target_system, U8),
                                      F(CA, "target_component", target_component, U8),
                                      END};
static const field set_mode_f[] = {F(mav_set_mode, "custom_mode", custom_mode, U32),
                                   F(mav_set_mode, "target_system", target_system, U8),
                                   F(mav_set_mode, "base_mode", base_mode, U8), END};
#define PT mav_position_target
#define PT_COMMON                                                                                  \
    F(PT, "time_boot_ms", time_boot_ms, U32), F(PT, "x", x, F32), F(PT, "y", y, F32),              \
        F(PT, "z", z, F32), F(PT, "vx", vx, F32), F(PT, "vy", vy, F32), F(PT, "vz", vz, F32),      \
        F(PT, "afx", afx, F32), F(PT, "afy", afy, F32), F(PT, "afz", afz, F32),                    \
        F(PT, "yaw", yaw, F32), F(PT, "yaw_rate", yaw_rate, F32),                                  \
        F(PT, "type_mask", type_mask, U16), F(PT, "coordinate_frame", coordinate_frame, U8)
static const field set_position_target_f[] = {PT_COMMON, F(PT, "target_system", target_system, U8),
                                              F(PT, "target_component", target_component, U8), END};
static const field position_target_f[] = {PT_COMMON, END};
static const field statustext_f[] = {
    F(mav_statustext, "severity", severity, U8), F(mav_statustext, "text", text, TEXT),
    F(mav_statustext, "id", id, U16), F(mav_statustext, "chunk_seq", chunk_seq, U8), END};

#define M(name, id, fn, T)                                                                         \
    {                                                                                              \
        name, id, sizeof(T), fn##_f, fn##_p, fn##_u                                                \
    }
static const message messages[] = {
    M("HEARTBEAT", MAV_MSG_HEARTBEAT, heartbeat, mav_heartbeat),
    M("SYS_STATUS", MAV_MSG_SYS_STATUS, sys_status, mav_sys_status),
    M("BATTERY_STATUS", MAV_MSG_BATTERY_STATUS, battery_status, mav_battery_status),
    M("ATTITUDE", MAV_MSG_ATTITUDE, attitude, mav_attitude),
    M("LOCAL_POSITION_NED", MAV_MSG_LOCAL_POSITION_NED, local_position_ned, mav_local_position_ned),
    M("GLOBAL_POSITION_INT", MAV_MSG_GLOBAL_POSITION_INT, global_position_int,
      mav_global_position_int),
    M("HOME_POSITION", MAV_MSG_HOME_POSITION, home_position, mav_home_position),
    M("EXTENDED_SYS_STATE", MAV_MSG_EXTENDED_SYS_STATE, extended_sys_state, mav_extended_sys_state),
    M("COMMAND_LONG", MAV_MSG_COMMAND_LONG, command_long, mav_command_long),
    M("COMMAND_ACK", MAV_MSG_COMMAND_ACK, command_ack, mav_command_ack),
    M("SET_MODE", MAV_MSG_SET_MODE, set_mode, mav_set_mode),
    M("SET_POSITION_TARGET_LOCAL_NED", MAV_MSG_SET_POSITION_TARGET_LOCAL_NED, set_position_target,
      mav_position_target),
    M("POSITION_TARGET_LOCAL_NED", MAV_MSG_POSITION_TARGET_LOCAL_NED, position_target,
      mav_position_target),
    M("STATUSTEXT", MAV_MSG_STATUSTEXT, statustext, mav_statustext),
};
#define NMSG (sizeof messages / sizeof messages[0])

static const message *message_named(const char *name)
{
    for (size_t i = 0; i < NMSG; i++)
        if (strcmp(messages[i].name, name) == 0) return &messages[i];
    return NULL;
}

static size_t type_size(ftype t)
{
    static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 4, 1};
    return sizes[t];
}

/* The JSON number of a field: node-mavlink writes NaN and infinities as
 * strings. */
static double json_number(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsString(v)) return strtod(v->valuestring, NULL);
    return NAN;
}

static void put(void *at, ftype t, double v)
{
    switch (t) {
    case U8: *(uint8_t *)at = (uint8_t)v; break;
    case I8: *(int8_t *)at = (int8_t)v; break;
    case U16: *(uint16_t *)at = (uint16_t)v; break;
    case I16: *(int16_t *)at = (int16_t)v; break;
    case U32: *(uint32_t *)at = (uint32_t)v; break;
    case I32: *(int32_t *)at = (int32_t)v; break;
    case U64: *(uint64_t *)at = (uint64_t)v; break;
    case F32: *(float *)at = (float)v; break;
    case TEXT: break;
    }
}

static double get(const void *at, ftype t)
{
    switch (t) {
    case U8: return *(const uint8_t *)at;
    case I8: return *(const int8_t *)at;
    case U16: return *(const uint16_t *)at;
    case I16: return *(const int16_t *)at;
    case U32: return *(const uint32_t *)at;
    case I32: return *(const int32_t *)at;
    case U64: return (double)*(const uint64_t *)at;
    case F32: return *(const float *)at;
    case TEXT: break;
    }
    return NAN;
}

/* Fills struct S of MSG from node-mavlink's decoded FIELDS. */
static void from_json(const message *msg, const cJSON *fields, void *s)
{
    memset(s, 0, msg->size);
    for (const field *f = msg->fields; f->name; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(fields, f->name);
        char *at = (char *)s + f->off;
        if (f->type == TEXT && cJSON_IsString(v))
            snprintf(at, 51, "%s", v->valuestring);
        else if (f->count > 1)
            for (int i = 0; i < f->count; i++)
                put(at + i * type_size(f->type), f->type, json_number(cJSON_GetArrayItem(v, i)));
        else
            put(at, f->type, json_number(v));
    }
}

static bool same(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* Our unpacked struct S against node-mavlink's FIELDS; WHAT names the frame. */
static void compare(const message *msg, const void *s, const cJSON *fields, const char *what)
{
    for (const field *f = msg->fields; f->name; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(fields, f->name);
        const char *at = (const char *)s + f->off;
        CHECK(v != NULL, "%s: node-mavlink has no field %s", what, f->name);
        if (!v) continue;
        if (f->type == TEXT) {
            CHECK(cJSON_IsString(v) && strcmp(at, v->valuestring) == 0, "%s: %s '%s' vs '%s'", what,
                  f->name, at, cJSON_IsString(v) ? v->valuestring : "?");
            continue;
        }
        for (int i = 0; i < f->count; i++) {
            double want = json_number(f->count > 1 ? cJSON_GetArrayItem(v, i) : v);
            /* node-mavlink reads floats as float32, so the JSON holds their
             * exact value; an integer of 64 bits may lose bits in JSON */
            double got = get(at + i * type_size(f->type), f->type);
            if (f->type == F32) want = (float)want;
            CHECK(same(got, want), "%s: %s[%d] ours %.9g, node-mavlink %.9g", what, f->name, i, got,
                  want);
        }
    }
}

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
    size_t n = 0;
    for (; hex[0] && hex[1] && n < max; hex += 2) {
        unsigned b;
        if (sscanf(hex, "%2x", &b) != 1) break;
        out[n++] = (uint8_t)b;
    }
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
        buf[n] = 0;
    else
        free(buf), buf = NULL;
    fclose(f);
    return buf;
}

static void check_definitions(const cJSON *defs)
{
    for (size_t i = 0; i < NMSG; i++) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(defs, messages[i].name);
        uint8_t crc_extra = 0, min_len = 0, max_len = 0;
        CHECK(d != NULL, "node-mavlink vectors lack %s", messages[i].name);
        CHECK(mav_msg_known(messages[i].id, &crc_extra, &min_len, &max_len), "%s unknown",
              messages[i].name);
        if (!d) continue;
        CHECK(json_number(cJSON_GetObjectItem(d, "id")) == messages[i].id, "%s id",
              messages[i].name);
        CHECK(json_number(cJSON_GetObjectItem(d, "crc_extra")) == crc_extra,
              "%s: CRC_EXTRA ours %d", messages[i].name, crc_extra);
        CHECK(json_number(cJSON_GetObjectItem(d, "min_len")) == min_len &&
                  json_number(cJSON_GetObjectItem(d, "max_len")) == max_len,
              "%s: lengths ours %d..%d", messages[i].name, min_len, max_len);
    }
}

/* One frame of node-mavlink's: parsed and unpacked by us; a MAVLink 2 frame
 * re-encoded from its fields must give its bytes back (but for a payload of
 * zeros, which node-mavlink cuts to nothing and MAVLink keeps one byte of).
 * Our own encoding goes to OURS, one hex line, for node-mavlink to read. */
static void check_frame(const cJSON *fr, FILE *ours)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(fr, "msg"));
    const char *hex = cJSON_GetStringValue(cJSON_GetObjectItem(fr, "hex"));
    const cJSON *fields = cJSON_GetObjectItem(fr, "fields");
    int proto = (int)json_number(cJSON_GetObjectItem(fr, "proto"));
    bool truncated = cJSON_IsTrue(cJSON_GetObjectItem(fr, "truncated"));
    const message *msg = name ? message_named(name) : NULL;
    if (!msg || !hex || !fields) {
        CHECK(0, "a frame of the vectors is malformed");
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "%s v%d%s", name, proto, truncated ? " truncated" : "");
    uint8_t bytes[MAV_MAX_FRAME];
    size_t n = unhex(hex, bytes, sizeof bytes);
    mav_parser p;
    mav_parser_init(&p);
    mav_frame f;
    CHECK(mav_parser_push(&p, bytes, n) == n);
    CHECK(mav_parser_next(&p, &f) == 1, "%s: our parser finds no frame in %s", what, hex);
    CHECK(p.stats.crc_errors == 0, "%s: our CRC disagrees with node-mavlink's", what);
    if (p.stats.frames != 1) return;
    CHECK(f.version == proto && f.msgid == msg->id, "%s: version %d id %u", what, f.version,
          f.msgid);
    CHECK(f.sysid == json_number(cJSON_GetObjectItem(fr, "sysid")) &&
              f.compid == json_number(cJSON_GetObjectItem(fr, "compid")) &&
              f.seq == json_number(cJSON_GetObjectItem(fr, "seq")),
          "%s: sender", what);
    unsigned char s[512], back[512];
    CHECK(msg->unpack(&f, s) == 0, "%s: unpack", what);
    compare(msg, s, fields, what);

    from_json(msg, fields, back);
    uint8_t payload[MAV_MAX_PAYLOAD], out[MAV_MAX_FRAME];
    size_t plen = msg->pack(back, payload);
    mav_sender snd = {f.sysid, f.compid, f.seq};
    size_t on = mav_frame_encode(out, &snd, msg->id, payload, plen);
    if (proto == 2 && truncated && bytes[1] > 0)
        CHECK(on == n && memcmp(out, bytes, n) == 0, "%s: our encoding differs from node-mavlink's",
              what);
    if (proto == 2 && bytes[1] == 0)
        CHECK(on == 13 && out[1] == 1, "%s: a zero payload keeps a byte", what);
    for (size_t i = 0; i < on; i++)
        fprintf(ours, "%02x", out[i]);
    fputc('\n', ours);
}

/* node-mavlink reads every frame we encoded, with the fields of the vector
 * it came from. */
static void check_node_reads(const char *node_cmd, const char *ours, const cJSON *frames)
{
    char cmd[3200];
    snprintf(cmd, sizeof cmd, "%s --decode < '%s'", node_cmd, ours);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return;
    static char line[8192];
    int i = 0, n = cJSON_GetArraySize(frames);
    while (fgets(line, sizeof line, p)) {
        cJSON *r = cJSON_Parse(line);
        const cJSON *fr = cJSON_GetArrayItem(frames, i);
        CHECK(r && cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")),
              "node-mavlink refuses our frame %d (%s): %s", i,
              fr ? cJSON_GetStringValue(cJSON_GetObjectItem(fr, "msg")) : "?", line);
        if (r && fr)
            CHECK(cJSON_Compare(cJSON_GetObjectItem(r, "fields"), cJSON_GetObjectItem(fr, "fields"),
                                true),
                  "node-mavlink reads other fields from our frame %d: %s", i, line);
        cJSON_Delete(r);
        i++;
    }
    CHECK(pclose(p) == 0, "vectors.js --decode failed");
    CHECK(i == n, "node-mavlink answered %d of %d frames", i, n);
}

int main(void)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    const char *build = getenv("BUILD") ? getenv("BUILD") : ".";
    char node_cmd[1024], vectors[1024], ours[1024], mod[1024], cmd[3200];
    snprintf(node_cmd, sizeof node_cmd, "node '%s/tests/mavlink/vectors.js'", src);
    snprintf(vectors, sizeof vectors, "%s/mavlink-vectors.json", build);
    snprintf(ours, sizeof ours, "%s/mavlink-vectors-ours.hex", build);
    snprintf(mod, sizeof mod, "%s/tests/mavlink/node_modules/node-mavlink", src);
    FILE *probe = fopen(mod, "r");
    if (!probe) {
        fprintf(stderr,
                "node-mavlink is not installed in %s/tests/mavlink: run "
                "scripts/setup.sh --test\n",
                src);
        return 1;
    }
    fclose(probe);
    /* generated now from the installed node-mavlink, not kept in the tree */
    snprintf(cmd, sizeof cmd, "%s --out '%s'", node_cmd, vectors);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    char *text = slurp(vectors);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(doc != NULL, "no vectors in %s", vectors);
    if (!doc) return 1;
    check_definitions(cJSON_GetObjectItem(doc, "messages"));
    const cJSON *frames = cJSON_GetObjectItem(doc, "frames");
    CHECK(cJSON_GetArraySize(frames) > 60, "too few vectors");
    FILE *o = fopen(ours, "w");
    CHECK(o != NULL);
    if (!o) return 1;
    const cJSON *fr;
    cJSON_ArrayForEach(fr, frames) check_frame(fr, o);
    fclose(o);
    check_node_reads(node_cmd, ours, frames);
    cJSON_Delete(doc);
    return failures ? 1 : 0;
}
