/*
 * The MAVLink codec (host/drone/mavlink_codec.h): frames published elsewhere
 * decode and re-encode byte for byte, payload layouts worked out by hand from
 * common.xml, truncation and zero-extension, and a parser that finds frames
 * in garbage, drops bad checksums, signed frames and unknown flags, and
 * takes MAVLink 1.
 * labels: mavlink
 */
#include "drone/mavlink_codec.h"

#include <math.h>
#include <string.h>

#include "check.h"

/* A MAVLink 2 HEARTBEAT of ArduPilot (autopilot 3) on a Pixhawk 6C, as
 * captured with od from its USB port and published in a project's test
 * report; the CRC bytes 73 89 come from the autopilot, not from us. */
static const uint8_t hb_v2[] = {0xfd, 0x09, 0x00, 0x00, 0xef, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
                                0x00, 0x00, 0x00, 0x02, 0x03, 0x51, 0x03, 0x03, 0x73, 0x89};

/* The MAVLink 1 HEARTBEAT of a published protocol walk-through: seq 0x4e,
 * system 1, component 1, quadrotor, ArduPilot, base mode 0x51, standby. */
static const uint8_t hb_v1[] = {0xfe, 0x09, 0x4e, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
                                0x00, 0x02, 0x03, 0x51, 0x04, 0x03, 0x1c, 0x7f};

static int parse_all(mav_parser *p, const uint8_t *data, size_t len, mav_frame *frames, int max)
{
    int n = 0;
    size_t at = 0;
    while (at < len) {
        at += mav_parser_push(p, data + at, len - at);
        while (n < max && mav_parser_next(p, &frames[n]) == 1)
            n++;
    }
    while (n < max && mav_parser_next(p, &frames[n]) == 1)
        n++;
    return n;
}

static void test_published_heartbeats(void)
{
    mav_parser p;
    mav_parser_init(&p);
    mav_frame f[2];
    CHECK(parse_all(&p, hb_v2, sizeof hb_v2, f, 2) == 1);
    mav_heartbeat hb;
    CHECK(mav_heartbeat_unpack(&f[0], &hb) == 0);
    CHECK(f[0].version == 2 && f[0].seq == 0xef && f[0].sysid == 1 && f[0].compid == 1);
    CHECK(hb.type == 2 && hb.autopilot == 3 && hb.base_mode == 0x51 && hb.system_status == 3 &&
          hb.mavlink_version == 3 && hb.custom_mode == 0);

    /* Our encoder gives the autopilot's bytes back. */
    uint8_t payload[MAV_MAX_PAYLOAD], out[MAV_MAX_FRAME];
    size_t len = mav_heartbeat_pack(&hb, payload);
    CHECK(len == 9);
    mav_sender s = {1, 1, 0xef};
    size_t n = mav_frame_encode(out, &s, MAV_MSG_HEARTBEAT, payload, len);
    CHECK(n == sizeof hb_v2 && memcmp(out, hb_v2, n) == 0);

    mav_parser_init(&p);
    CHECK(parse_all(&p, hb_v1, sizeof hb_v1, f, 2) == 1);
    CHECK(f[0].version == 1 && f[0].seq == 0x4e && f[0].msgid == 0);
    CHECK(mav_heartbeat_unpack(&f[0], &hb) == 0);
    CHECK(hb.type == 2 && hb.autopilot == 3 && hb.base_mode == 0x51 && hb.system_status == 4);
    CHECK(mav_command_ack_unpack(&f[0], &(mav_command_ack){0}) == -1, "another message");
}

/* COMMAND_LONG worked out from common.xml: seven floats first (28 bytes),
 * then command (uint16), target_system, target_component, confirmation. */
static void test_command_long_layout(void)
{
    mav_command_long c = {
        .param = {1.0f}, .command = 400, .target_system = 7, .target_component = 1};
    uint8_t payload[MAV_MAX_PAYLOAD];
    CHECK(mav_command_long_pack(&c, payload) == 33);
    static const uint8_t want[33] = {0x00, 0x00, 0x80, 0x3f, [28] = 0x90, 0x01, 7, 1, 0};
    CHECK(memcmp(payload, want, 33) == 0);

    /* confirmation 0 is cut on the wire: 32 payload bytes */
    uint8_t out[MAV_MAX_FRAME];
    size_t n = mav_frame_encode(out, &(mav_sender){255, 190, 0}, MAV_MSG_COMMAND_LONG, payload, 33);
    CHECK(n == 12 + 32 && out[1] == 32);
    CHECK(out[7] == 76 && out[8] == 0 && out[9] == 0);
}

/* A COMMAND_ACK of command 400 accepted has two non-zero payload bytes; the
 * rest is cut by the sender and comes back as zeros. */
static void test_truncation_and_zero_extension(void)
{
    mav_command_ack a = {.command = 400, .result = 0, .progress = 0};
    uint8_t payload[MAV_MAX_PAYLOAD], out[MAV_MAX_FRAME];
    size_t len = mav_command_ack_pack(&a, payload);
    CHECK(len == 10);
    size_t n = mav_frame_encode(out, &(mav_sender){1, 1, 5}, MAV_MSG_COMMAND_ACK, payload, len);
    CHECK(n == 14 && out[1] == 2 && out[10] == 0x90 && out[11] == 0x01);

    /* An all-zero payload keeps its first byte. */
    mav_extended_sys_state e = {0};
    len = mav_extended_sys_state_pack(&e, payload);
    n = mav_frame_encode(out, &(mav_sender){1, 1, 5}, MAV_MSG_EXTENDED_SYS_STATE, payload, len);
    CHECK(n == 13 && out[1] == 1);

    mav_parser p;
    mav_parser_init(&p);
    mav_frame f;
    mav_parser_push(&p, out, n);
    CHECK(mav_parser_next(&p, &f) == 1);
    mav_extended_sys_state back = {9, 9};
    CHECK(mav_extended_sys_state_unpack(&f, &back) == 0 && back.landed_state == 0 &&
          back.vtol_state == 0);

    /* A frame longer than our definition (a newer extension) still parses. */
    CHECK(mav_frame_encode(out, &(mav_sender){1, 1, 5}, 999999, payload, 2) == 0, "unknown id");
}

static size_t encode(uint8_t *out, uint8_t seq, uint32_t msgid, const uint8_t *payload, size_t len)
{
    return mav_frame_encode(out, &(mav_sender){1, 1, seq}, msgid, payload, len);
}

/* Every message packs and unpacks to the same values, through the parser. */
static void test_round_trips(void)
{
    uint8_t payload[MAV_MAX_PAYLOAD], again[MAV_MAX_PAYLOAD], out[MAV_MAX_FRAME];
    mav_parser p;
    mav_parser_init(&p);
    mav_frame f;
    typedef mav_position_target mav_set_position_target;
#define ROUND(name, id, val)                                                                       \
    do {                                                                                           \
        mav_##name back;                                                                           \
        size_t n = encode(out, 1, id, payload, mav_##name##_pack(&(val), payload));                \
        mav_parser_push(&p, out, n);                                                               \
        CHECK(mav_parser_next(&p, &f) == 1 && f.msgid == id, #name);                               \
        CHECK(mav_##name##_unpack(&f, &back) == 0, #name);                                         \
        /* compared packed: struct padding holds no value */                                       \
        size_t len_back = mav_##name##_pack(&back, again);                                         \
        CHECK(len_back == mav_##name##_pack(&(val), payload) &&                                    \
                  memcmp(again, payload, len_back) == 0,                                           \
              #name);                                                                              \
    } while (0)
    mav_heartbeat hb = {0x00060000, 2, 12, 0x9d, 4, 3};
    ROUND(heartbeat, MAV_MSG_HEARTBEAT, hb);
    mav_sys_status ss = {1, 2, 3, 4, 12600, -1, 5, 6, {7, 8, 9, 10}, 77, 11, 12, 13};
    ROUND(sys_status, MAV_MSG_SYS_STATUS, ss);
    mav_battery_status bs = {1000, 2000,       2500, {4200, 4100, 65535, 1, 2, 3, 4, 5, 6, 7},
                             -300, 1,          2,    3,
                             55,   600,        4,    {8, 9, 10, 11},
                             1,    0x80000001u};
    ROUND(battery_status, MAV_MSG_BATTERY_STATUS, bs);
    mav_attitude at = {123, 0.1f, -0.2f, 3.1f, 0.01f, 0.02f, -0.03f};
    ROUND(attitude, MAV_MSG_ATTITUDE, at);
    mav_local_position_ned lp = {456, 1.5f, -2.5f, -10.0f, 0.1f, 0.2f, 0.3f};
    ROUND(local_position_ned, MAV_MSG_LOCAL_POSITION_NED, lp);
    mav_global_position_int gp = {789, 473977418, 85455938, 488000, 10000, -5, 6, -7, 35999};
    ROUND(global_position_int, MAV_MSG_GLOBAL_POSITION_INT, gp);
    mav_home_position hp = {473977418, 85455938, 488000,          1, 2, 3, {1, 0, 0, 0}, 4,
                            5,         6,        1234567890123ull};
    ROUND(home_position, MAV_MSG_HOME_POSITION, hp);
    mav_extended_sys_state es = {0, 2};
    ROUND(extended_sys_state, MAV_MSG_EXTENDED_SYS_STATE, es);
    mav_command_long cl = {{1, 2, 3, 4, 5, 6, 7}, 511, 1, 1, 0};
    ROUND(command_long, MAV_MSG_COMMAND_LONG, cl);
    mav_command_ack ca = {176, 4, 50, -9, 255, 190};
    ROUND(command_ack, MAV_MSG_COMMAND_ACK, ca);
    mav_set_mode sm = {4, 1, 1};
    ROUND(set_mode, MAV_MSG_SET_MODE, sm);
    mav_statustext st = {3, "PreArm: Need Position Estimate", 0, 0};
    ROUND(statustext, MAV_MSG_STATUSTEXT, st);
    mav_position_target pt = {1, 2, 3, -4, 0, 0, 0, 0, 0, 0, 1.57f, 0, 0x0df8, 1, 1, 1};
    ROUND(set_position_target, MAV_MSG_SET_POSITION_TARGET_LOCAL_NED, pt);
    pt.target_system = pt.target_component = 0;
    ROUND(position_target, MAV_MSG_POSITION_TARGET_LOCAL_NED, pt);
    CHECK(p.stats.frames == 14 && p.stats.crc_errors == 0);
    /* spot checks that unpacking fills the right members */
    mav_battery_status b2;
    encode(out, 1, MAV_MSG_BATTERY_STATUS, payload, mav_battery_status_pack(&bs, payload));
    mav_parser_push(&p, out, 12 + 54);
    CHECK(mav_parser_next(&p, &f) == 1 && mav_battery_status_unpack(&f, &b2) == 0);
    CHECK(b2.battery_remaining == 55 && b2.voltages[0] == 4200 && b2.fault_bitmask == 0x80000001u &&
          b2.voltages_ext[3] == 11 && b2.current_battery == -300);
#undef ROUND
}

/* A 50-byte text fills the field with no NUL on the wire. */
static void test_statustext_full(void)
{
    mav_statustext st = {2, {0}, 0, 0};
    memset(st.text, 'x', 50);
    uint8_t payload[MAV_MAX_PAYLOAD], out[MAV_MAX_FRAME];
    size_t n = encode(out, 1, MAV_MSG_STATUSTEXT, payload, mav_statustext_pack(&st, payload));
    mav_parser p;
    mav_parser_init(&p);
    mav_frame f;
    mav_parser_push(&p, out, n);
    CHECK(mav_parser_next(&p, &f) == 1);
    f.payload[51] = 'y'; /* what follows the text on the wire must not leak into it */
    mav_statustext back;
    CHECK(mav_statustext_unpack(&f, &back) == 0 && strlen(back.text) == 50);
}

static size_t heartbeat_frame(uint8_t *out, uint8_t seq)
{
    uint8_t payload[MAV_MAX_PAYLOAD];
    mav_heartbeat hb = {0, 2, 12, 0x81, 4, 3};
    return encode(out, seq, MAV_MSG_HEARTBEAT, payload, mav_heartbeat_pack(&hb, payload));
}

/* Boot text, then a false start whose claimed frame would swallow the real
 * one, then the real frame: the parser finds it, byte by byte or whole. */
static void test_resync_after_garbage(void)
{
    uint8_t stream[400];
    size_t n = 0;
    const char *boot = "U-Boot 2021.01\r\nArduCopter V4.5.7 (f00dcafe)\r\n";
    memcpy(stream, boot, strlen(boot));
    n += strlen(boot);
    /* a false start whose message id we do not know (its id bytes run into the
     * next start's magic) */
    static const uint8_t false_unknown[] = {0xfd, 9, 0, 0, 1, 1, 1, 0, 0};
    memcpy(stream + n, false_unknown, sizeof false_unknown);
    n += sizeof false_unknown;
    /* a false MAVLink 2 start: len 9, msgid 0 (HEARTBEAT, known), 3 bytes:
     * its claimed length would swallow the start of the real frame */
    static const uint8_t false_known[] = {0xfd, 9, 0, 0, 1, 1, 1, 0, 0, 0, 'a', 'b', 'c'};
    memcpy(stream + n, false_known, sizeof false_known);
    n += sizeof false_known;
    n += heartbeat_frame(stream + n, 42);
    stream[n++] = 0xfe; /* a truncated frame at the end: never returned */
    stream[n++] = 0x09;

    for (int bytewise = 0; bytewise < 2; bytewise++) {
        mav_parser p;
        mav_parser_init(&p);
        mav_frame f[3];
        int got = 0;
        if (bytewise) {
            for (size_t i = 0; i < n; i++) {
                mav_parser_push(&p, stream + i, 1);
                while (got < 3 && mav_parser_next(&p, &f[got]) == 1)
                    got++;
            }
        } else {
            got = parse_all(&p, stream, n, f, 3);
        }
        CHECK(got == 1 && f[0].seq == 42, "bytewise %d: %d frames", bytewise, got);
        CHECK(p.stats.skipped > strlen(boot), "bytewise %d", bytewise);
        CHECK(p.stats.crc_errors >= 1, "bytewise %d: the false start", bytewise);
    }
}

static void test_crc_failure_dropped(void)
{
    uint8_t stream[200];
    size_t a = heartbeat_frame(stream, 1);
    size_t b = heartbeat_frame(stream + a, 2);
    stream[12] ^= 0x01; /* one payload bit of the first frame */
    mav_parser p;
    mav_parser_init(&p);
    mav_frame f[3];
    CHECK(parse_all(&p, stream, a + b, f, 3) == 1 && f[0].seq == 2);
    CHECK(p.stats.crc_errors == 1 && p.stats.frames == 1, "crc %lu", p.stats.crc_errors);

    /* the same frame with the right CRC but a wrong CRC_EXTRA (another
     * definition of the message) is refused too */
    uint8_t bad[40];
    size_t n = heartbeat_frame(bad, 3);
    uint16_t crc = mav_crc_accumulate(51, mav_crc(bad + 1, n - 3, 0xffff));
    bad[n - 2] = (uint8_t)crc, bad[n - 1] = (uint8_t)(crc >> 8);
    mav_parser_init(&p);
    CHECK(parse_all(&p, bad, n, f, 3) == 0 && p.stats.crc_errors == 1);
}

/* A signed frame (incompat 0x01) is dropped with its 13 signature bytes, a
 * frame with an unknown incompatibility flag is dropped, an unknown message
 * is skipped whole; the frame after each is found. */
static void test_signed_flags_unknown(void)
{
    uint8_t stream[400];
    size_t n = heartbeat_frame(stream, 1);
    stream[2] = MAV_INCOMPAT_SIGNED;
    uint16_t crc = mav_crc_accumulate(50, mav_crc(stream + 1, n - 3, 0xffff));
    stream[n - 2] = (uint8_t)crc, stream[n - 1] = (uint8_t)(crc >> 8);
    /* a signature full of magic bytes: must not be read as frames */
    memset(stream + n, MAV_MAGIC_V2, MAV_SIGNATURE_LEN);
    n += MAV_SIGNATURE_LEN;
    size_t m = heartbeat_frame(stream + n, 2);
    stream[n + 2] = 0x02;
    crc = mav_crc_accumulate(50, mav_crc(stream + n + 1, m - 3, 0xffff));
    stream[n + m - 2] = (uint8_t)crc, stream[n + m - 1] = (uint8_t)(crc >> 8);
    n += m;
    /* message 12345, which we do not know, its payload full of magic bytes */
    static const uint8_t unknown[] = {0xfd, 4,    0,    0,    9,    1,    1,    0x39,
                                      0x30, 0x00, 0xfd, 0xfd, 0xfe, 0xfd, 0x12, 0x34};
    memcpy(stream + n, unknown, sizeof unknown);
    n += sizeof unknown;
    n += heartbeat_frame(stream + n, 3);

    mav_parser p;
    mav_parser_init(&p);
    mav_frame f[4];
    CHECK(parse_all(&p, stream, n, f, 4) == 1 && f[0].seq == 3);
    CHECK(p.stats.signed_drop == 1 && p.stats.bad_flags == 1 && p.stats.unknown == 1);
    CHECK(p.stats.crc_errors == 0, "%lu", p.stats.crc_errors);
}

/* Check values of CRC-16/MCRF4XX: "123456789" gives 0x6F91. */
static void test_crc_check_value(void)
{
    CHECK(mav_crc((const uint8_t *)"123456789", 9, 0xffff) == 0x6f91);
    uint8_t extra, lo, hi;
    CHECK(mav_msg_known(MAV_MSG_STATUSTEXT, &extra, &lo, &hi) && extra == 83 && lo == 51 &&
          hi == 54);
    CHECK(!mav_msg_known(2, NULL, NULL, NULL));
}

int main(void)
{
    test_crc_check_value();
    test_published_heartbeats();
    test_command_long_layout();
    test_truncation_and_zero_extension();
    test_round_trips();
    test_statustext_full();
    test_resync_after_garbage();
    test_crc_failure_dropped();
    test_signed_flags_unknown();
    return failures ? 1 : 0;
}
