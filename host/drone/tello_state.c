/*
 * Parser for the Tello state string: "key:value;" segments, see
 * tello_state.h. The table below is the whole vocabulary.
 */
#include "drone/tello_state.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each key, where its value goes, and the range a Tello can physically
 * report for it (generous: the point is to keep out NaN, infinities and
 * absurd numbers, not to second-guess the firmware). */
typedef struct state_key {
    const char *name;
    unsigned bit;
    size_t offset;
    double lo, hi;
} state_key;

#define KEY(name, member, bit, lo, hi)                                                             \
    {                                                                                              \
        name, bit, offsetof(tello_sdk_state, member), lo, hi                                       \
    }

static const state_key state_keys[] = {
    KEY("pitch", pitch, TELLO_F_PITCH, -360, 360), /* degrees */
    KEY("roll", roll, TELLO_F_ROLL, -360, 360),
    KEY("yaw", yaw, TELLO_F_YAW, -360, 360),
    KEY("vgx", vgx, TELLO_F_VGX, -200, 200), /* dm/s: a Tello flies under 10 m/s */
    KEY("vgy", vgy, TELLO_F_VGY, -200, 200),
    KEY("vgz", vgz, TELLO_F_VGZ, -200, 200),
    KEY("templ", templ, TELLO_F_TEMPL, -60, 200), /* degrees Celsius */
    KEY("temph", temph, TELLO_F_TEMPH, -60, 200),
    KEY("tof", tof, TELLO_F_TOF, -100, 10000),     /* cm (6553 when it sees nothing) */
    KEY("h", h, TELLO_F_H, -1000, 10000),          /* cm above the take-off point */
    KEY("bat", bat, TELLO_F_BAT, 0, 100),          /* percent */
    KEY("baro", baro, TELLO_F_BARO, -1000, 10000), /* metres */
    KEY("time", time, TELLO_F_TIME, 0, 1e6),       /* seconds of motor time */
    KEY("agx", agx, TELLO_F_AGX, -32000, 32000),   /* 0.001 g */
    KEY("agy", agy, TELLO_F_AGY, -32000, 32000),
    KEY("agz", agz, TELLO_F_AGZ, -32000, 32000),
    KEY("mid", mid, TELLO_F_MID, -2, 1000),    /* mission pad id, -1 none */
    KEY("x", mx, TELLO_F_MX, -100000, 100000), /* cm from the pad */
    KEY("y", my, TELLO_F_MY, -100000, 100000),
    KEY("z", mz, TELLO_F_MZ, -100000, 100000),
};

/* Parses the whole of [s, e) as one number. */
static int parse_number(const char *s, const char *e, double *out)
{
    char buf[48];
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    char *end;
    double v = strtod(buf, &end);
    if (errno || end != buf + n) return -1;
    *out = v;
    return 0;
}

/* mpry:P,R,Y — the pad's pitch, roll and yaw. */
static int parse_triple(const char *s, const char *e, double out[3])
{
    for (int i = 0; i < 3; i++) {
        const char *comma = i < 2 ? memchr(s, ',', (size_t)(e - s)) : e;
        if (!comma || parse_number(s, comma, &out[i]) < 0) return -1;
        s = comma + 1;
    }
    return 0;
}

static int parse_segment(const char *s, const char *e, tello_sdk_state *out)
{
    const char *colon = memchr(s, ':', (size_t)(e - s));
    if (!colon || colon == s) return -1;
    size_t klen = (size_t)(colon - s);
    if (klen == 4 && memcmp(s, "mpry", 4) == 0) {
        if (parse_triple(colon + 1, e, out->mpry) < 0) return -1;
        out->fields |= TELLO_F_MPRY;
        return 0;
    }
    for (size_t i = 0; i < sizeof state_keys / sizeof state_keys[0]; i++) {
        const state_key *k = &state_keys[i];
        if (strlen(k->name) != klen || memcmp(k->name, s, klen) != 0) continue;
        double *slot = (double *)((char *)out + k->offset);
        if (parse_number(colon + 1, e, slot) < 0) return -1;
        out->fields |= k->bit;
        return 0;
    }
    return 0; /* a key of newer firmware */
}

static int is_space(char c)
{
    return c == ' ' || c == '\r' || c == '\n' || c == '\t';
}

int tello_state_parse(const char *text, size_t len, tello_sdk_state *out)
{
    memset(out, 0, sizeof *out);
    out->mid = -1;
    const char *p = text, *end = text + len;
    while (p < end) {
        while (p < end && is_space(*p))
            p++;
        if (p == end) break;
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *seg_end = semi ? semi : end;
        const char *trim = seg_end;
        while (trim > p && is_space(trim[-1]))
            trim--;
        if (trim > p && parse_segment(p, trim, out) < 0) return -1;
        p = semi ? semi + 1 : end;
    }
    unsigned core = TELLO_F_BAT | TELLO_F_H | TELLO_F_YAW;
    return (out->fields & core) == core ? 0 : -1;
}

bool tello_battery_valid(double v)
{
    return isfinite(v) && v >= 0 && v <= 100;
}

unsigned tello_state_validate(tello_sdk_state *s)
{
    unsigned dropped = 0;
    for (size_t i = 0; i < sizeof state_keys / sizeof state_keys[0]; i++) {
        const state_key *k = &state_keys[i];
        double *v = (double *)((char *)s + k->offset);
        if (!(s->fields & k->bit) || (isfinite(*v) && *v >= k->lo && *v <= k->hi)) continue;
        dropped |= k->bit;
        *v = 0;
    }
    for (int i = 0; i < 3 && (s->fields & TELLO_F_MPRY); i++) {
        if (isfinite(s->mpry[i]) && fabs(s->mpry[i]) <= 360) continue;
        dropped |= TELLO_F_MPRY;
        s->mpry[0] = s->mpry[1] = s->mpry[2] = 0;
    }
    if (dropped & TELLO_F_MID) s->mid = -1;
    s->fields &= ~dropped;
    return dropped;
}
