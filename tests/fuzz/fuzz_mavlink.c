/*
 * libFuzzer harness for the MAVLink parser and every unpacker
 * (host/drone/mavlink_codec.c). Properties, each an abort when broken:
 *   - no crash, no undefined behaviour, no leak (ASan/UBSan/LeakSanitizer);
 *   - the frames found are the same whether the bytes arrive whole or in
 *     pieces of pseudo-random sizes (down to one byte), once the bytes of a
 *     frame whose message is unknown are followed by another start;
 *   - every frame returned re-encodes (MAVLink 2, unsigned) into a frame the
 *     parser returns again with the same header fields and payload;
 *   - every unpacker accepts only its own message and leaves a STATUSTEXT's
 *     text a C string of at most 50 bytes.
 *
 * The source is included rather than linked so that it carries the
 * fuzzer's coverage instrumentation.
 */
#include "../../host/drone/mavlink_codec.c"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 256

static void must(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_mavlink: broken: %s\n", what);
        abort();
    }
}

static void unpack_every(const mav_frame *f)
{
    mav_heartbeat hb;
    mav_sys_status ss;
    mav_battery_status bs;
    mav_attitude at;
    mav_local_position_ned lp;
    mav_global_position_int gp;
    mav_home_position hp;
    mav_extended_sys_state es;
    mav_command_long cl;
    mav_command_ack ca;
    mav_set_mode sm;
    mav_statustext st;
    mav_position_target pt;
    int ok = 0;
    ok += mav_heartbeat_unpack(f, &hb) == 0;
    ok += mav_sys_status_unpack(f, &ss) == 0;
    ok += mav_battery_status_unpack(f, &bs) == 0;
    ok += mav_attitude_unpack(f, &at) == 0;
    ok += mav_local_position_ned_unpack(f, &lp) == 0;
    ok += mav_global_position_int_unpack(f, &gp) == 0;
    ok += mav_home_position_unpack(f, &hp) == 0;
    ok += mav_extended_sys_state_unpack(f, &es) == 0;
    ok += mav_command_long_unpack(f, &cl) == 0;
    ok += mav_command_ack_unpack(f, &ca) == 0;
    ok += mav_set_mode_unpack(f, &sm) == 0;
    ok += mav_set_position_target_unpack(f, &pt) == 0;
    ok += mav_position_target_unpack(f, &pt) == 0;
    if (mav_statustext_unpack(f, &st) == 0) {
        ok++;
        must(strlen(st.text) <= 50, "statustext text terminated");
    }
    must(ok == 1, "exactly one unpacker takes a known message");
}

static void reencode(const mav_frame *f)
{
    uint8_t out[MAV_MAX_FRAME];
    mav_sender s = {f->sysid, f->compid, f->seq};
    size_t n = mav_frame_encode(out, &s, f->msgid, f->payload, f->len);
    must(n > 0, "a parsed frame's message encodes");
    mav_parser p;
    mav_parser_init(&p);
    mav_parser_push(&p, out, n);
    mav_frame back;
    must(mav_parser_next(&p, &back) == 1, "a re-encoded frame parses");
    must(back.sysid == f->sysid && back.compid == f->compid && back.seq == f->seq &&
             back.msgid == f->msgid,
         "header survives");
    must(memcmp(back.payload, f->payload, MAV_MAX_PAYLOAD) == 0, "payload survives");
}

static int parse(const uint8_t *data, size_t size, size_t seed, mav_frame *frames)
{
    mav_parser p;
    mav_parser_init(&p);
    int n = 0;
    size_t at = 0;
    uint32_t r = (uint32_t)seed * 2654435761u + 1;
    while (at < size) {
        size_t chunk = size - at;
        if (seed) {
            r = r * 1103515245u + 12345u;
            chunk = 1 + (r >> 16) % 64;
            if (chunk > size - at) chunk = size - at;
        }
        size_t took = mav_parser_push(&p, data + at, chunk);
        at += took;
        while (mav_parser_next(&p, &frames[n]) == 1)
            if (n < MAX_FRAMES - 1) n++;
    }
    /* close the stream with a start so that a trailing unknown frame is
     * judged the same way in both runs */
    static const uint8_t magic = MAV_MAGIC_V2;
    mav_parser_push(&p, &magic, 1);
    while (mav_parser_next(&p, &frames[n]) == 1)
        if (n < MAX_FRAMES - 1) n++;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mav_frame whole[MAX_FRAMES], pieces[MAX_FRAMES];
    int n = parse(data, size, 0, whole);
    int m = parse(data, size, size + 7, pieces);
    must(n == m, "same frame count whole and in pieces");
    for (int i = 0; i < n; i++) {
        must(memcmp(&whole[i], &pieces[i], sizeof whole[i]) == 0, "same frames in pieces");
        unpack_every(&whole[i]);
        reencode(&whole[i]);
    }
    return 0;
}
