/*
 * The Tello state string parser: SDK 2.0 strings, the SDK 3.0 variant with
 * mission-pad fields, unknown keys, text that is not a state string, and
 * the validation of values (NaN, infinities, out of physical range).
 * labels: tello safety
 */
#include "drone/tello_state.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int parse(const char *text, tello_sdk_state *s)
{
    return tello_state_parse(text, strlen(text), s);
}

static void sdk2_string_is_parsed(void)
{
    tello_sdk_state s;
    const char *text = "pitch:1;roll:-2;yaw:-45;vgx:3;vgy:-4;vgz:5;templ:60;temph:62;tof:93;"
                       "h:80;bat:87;baro:182.54;time:12;agx:-1.00;agy:2.50;agz:-998.00;\r\n";
    CHECK(parse(text, &s) == 0, "rejected");
    CHECK(s.pitch == 1 && s.roll == -2 && s.yaw == -45, "attitude %g %g %g", s.pitch, s.roll,
          s.yaw);
    CHECK(s.vgx == 3 && s.vgy == -4 && s.vgz == 5, "speeds");
    CHECK(s.templ == 60 && s.temph == 62, "temperatures");
    CHECK(s.tof == 93 && s.h == 80 && s.bat == 87 && s.time == 12, "tof/h/bat/time");
    CHECK(fabs(s.baro - 182.54) < 1e-9, "baro %g", s.baro);
    CHECK(s.agx == -1 && s.agy == 2.5 && s.agz == -998, "accelerations");
    CHECK(!(s.fields & (TELLO_F_MID | TELLO_F_MPRY)), "pad fields in an SDK 2.0 string");
    CHECK(s.mid == -1, "mid %g without a pad", s.mid);
}

static void sdk3_string_with_mission_pad_is_parsed(void)
{
    tello_sdk_state s;
    const char *text = "mid:4;x:-52;y:31;z:120;mpry:1,-2,178;pitch:0;roll:0;yaw:90;vgx:0;vgy:0;"
                       "vgz:0;templ:70;temph:72;tof:130;h:120;bat:55;baro:101.20;time:40;"
                       "agx:0.00;agy:0.00;agz:-1000.00;\r\n";
    CHECK(parse(text, &s) == 0, "rejected");
    CHECK(s.mid == 4 && s.mx == -52 && s.my == 31 && s.mz == 120, "pad %g %g %g %g", s.mid, s.mx,
          s.my, s.mz);
    CHECK(s.mpry[0] == 1 && s.mpry[1] == -2 && s.mpry[2] == 178, "mpry %g,%g,%g", s.mpry[0],
          s.mpry[1], s.mpry[2]);
    CHECK((s.fields & TELLO_F_MPRY) && (s.fields & TELLO_F_MID), "fields %x", s.fields);
    CHECK(s.yaw == 90 && s.h == 120 && s.bat == 55 && s.tof == 130, "core fields");
}

static void unknown_keys_and_spacing_are_tolerated(void)
{
    tello_sdk_state s;
    CHECK(parse("bat:9; h:0 ;yaw:0;wifi:90;newkey:a,b,c;\n", &s) == 0, "rejected");
    CHECK(s.bat == 9 && s.h == 0 && s.yaw == 0, "values");
    CHECK(parse("yaw:3;h:1;bat:2", &s) == 0, "no final ';' rejected");
}

static void other_text_is_rejected(void)
{
    tello_sdk_state s;
    CHECK(parse("ok", &s) < 0, "'ok' accepted");
    CHECK(parse("", &s) < 0, "empty accepted");
    CHECK(parse("pitch:0;roll:0;yaw:0;", &s) < 0, "no bat/h accepted");
    CHECK(parse("yaw:0;h:zero;bat:5;", &s) < 0, "bad number accepted");
    CHECK(parse("yaw:0;h:1;bat:5;mpry:1,2;", &s) < 0, "short mpry accepted");
    CHECK(parse("yaw:0;h:1;bat:5;garbage;", &s) < 0, "segment without ':' accepted");
    CHECK(parse("yaw:0;h:1e999;bat:5;", &s) < 0, "overflow accepted");
    /* Length is honoured: the text need not be NUL-terminated. */
    const char *text = "yaw:1;h:2;bat:3;";
    CHECK(tello_state_parse(text, 10, &s) < 0, "read past LEN");
}

/* Parses "yaw:0;h:0;bat:50;KEY:VALUE;" and validates it: the bits dropped. */
static unsigned dropped(const char *key, const char *value)
{
    char text[128];
    snprintf(text, sizeof text, "yaw:0;h:0;bat:50;%s:%s;", key, value);
    tello_sdk_state s;
    if (tello_state_parse(text, strlen(text), &s) < 0) return ~0u;
    unsigned d = tello_state_validate(&s);
    CHECK(!(s.fields & d), "%s:%s still in fields", key, value);
    return d;
}

static void values_out_of_range_are_dropped(void)
{
    static const char *const bad[] = {"nan", "-nan", "inf", "-inf", "1e308", "-1e308"};
    static const struct {
        const char *key;
        unsigned bit;
        const char *lo_in, *lo_out, *hi_in, *hi_out;
    } edges[] = {
        {"bat", TELLO_F_BAT, "0", "-0.01", "100", "100.01"},
        {"yaw", TELLO_F_YAW, "-360", "-360.5", "360", "360.5"},
        {"h", TELLO_F_H, "-1000", "-1000.5", "10000", "10000.5"},
        {"vgx", TELLO_F_VGX, "-200", "-201", "200", "201"},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        const char *k = edges[i].key;
        unsigned bit = edges[i].bit;
        for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++)
            CHECK(dropped(k, bad[j]) == bit, "%s:%s kept", k, bad[j]);
        CHECK(dropped(k, edges[i].lo_in) == 0, "%s:%s dropped", k, edges[i].lo_in);
        CHECK(dropped(k, edges[i].hi_in) == 0, "%s:%s dropped", k, edges[i].hi_in);
        CHECK(dropped(k, edges[i].lo_out) == bit, "%s:%s kept", k, edges[i].lo_out);
        CHECK(dropped(k, edges[i].hi_out) == bit, "%s:%s kept", k, edges[i].hi_out);
    }
    CHECK(dropped("bat", "-2147483649") == TELLO_F_BAT, "an int's underflow kept");
    CHECK(dropped("mpry", "1,nan,3") == TELLO_F_MPRY, "a NaN in mpry kept");
    CHECK(tello_battery_valid(0) && tello_battery_valid(100) && !tello_battery_valid(-1) &&
              !tello_battery_valid(101) && !tello_battery_valid(NAN) &&
              !tello_battery_valid(INFINITY),
          "battery range");
}

/* The parser's own edges: the 47-character number buffer, empty values and
 * keys, tabs, empty segments, and a bad number inside mpry. */
static void parser_edges(void)
{
    tello_sdk_state s;
    char text[160];
    char digits[64];
    memset(digits, '0', sizeof digits);
    digits[46] = '7';
    digits[47] = '\0'; /* 47 characters: the longest number read */
    snprintf(text, sizeof text, "yaw:0;bat:5;h:%s;", digits);
    CHECK(parse(text, &s) == 0 && s.h == 7, "state number buffer: a 47-character number refused");
    memset(digits, '0', 47);
    digits[47] = '7';
    digits[48] = '\0';
    snprintf(text, sizeof text, "yaw:0;bat:5;h:%s;", digits);
    CHECK(parse(text, &s) < 0, "state number buffer: a 48-character number accepted");
    CHECK(parse("yaw:0;bat:5;h:;", &s) < 0, "an empty value accepted");
    CHECK(parse("yaw:0;bat:5;h:1;:5;", &s) < 0, "an empty key accepted");
    CHECK(parse("yaw:0;h:1;bat:5;mpry:1,x,3;", &s) < 0, "a bad number in mpry accepted");
    CHECK(parse("\tyaw:0;;h:1\t;  ;bat:5;", &s) == 0 && s.bat == 5 && s.h == 1,
          "tabs and empty segments refused");
}

/* The pad's id (-2..1000) and mpry (|v| <= 360) at their edges; a dropped
 * id reads as "no pad" (-1). */
static void pad_fields_at_their_edges(void)
{
    CHECK(dropped("mid", "1000") == 0 && dropped("mid", "-2") == 0, "mid in range dropped");
    CHECK(dropped("mid", "1001") == TELLO_F_MID && dropped("mid", "-3") == TELLO_F_MID,
          "mid out of range kept");
    tello_sdk_state s;
    CHECK(parse("yaw:0;h:0;bat:50;mid:1001;", &s) == 0);
    tello_state_validate(&s);
    CHECK(s.mid == -1, "a dropped mission pad id reads %g, not -1 (no pad)", s.mid);
    CHECK(dropped("mpry", "360,-360,0") == 0, "mpry at +-360 dropped");
    CHECK(dropped("mpry", "1,2,360.5") == TELLO_F_MPRY, "mpry over 360 kept");
    CHECK(dropped("mpry", "-360.5,2,3") == TELLO_F_MPRY, "mpry under -360 kept");
}

int main(void)
{
    sdk2_string_is_parsed();
    sdk3_string_with_mission_pad_is_parsed();
    unknown_keys_and_spacing_are_tolerated();
    other_text_is_rejected();
    values_out_of_range_are_dropped();
    parser_edges();
    pad_fields_at_their_edges();
    if (failures) {
        fprintf(stderr, "test_tello_state: %d check(s) failed\n", failures);
        return 1;
    }
    puts("test_tello_state: all checks passed");
    return 0;
}
