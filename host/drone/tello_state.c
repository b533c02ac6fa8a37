/*
 * Parser for the Tello state string: "key:value;" segments, see
 * tello_state.h. The table below is the whole vocabulary.
 */
#include "drone/tello_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct state_key {
    const char *name;
    unsigned bit;
    size_t offset;
} state_key;

#define KEY(name, member, bit)                                                                     \
    {                                                                                              \
        name, bit, offsetof(tello_sdk_state, member)                                               \
    }

static const state_key state_keys[] = {
    KEY("pitch", pitch, TELLO_F_PITCH), KEY("roll", roll, TELLO_F_ROLL),
    KEY("yaw", yaw, TELLO_F_YAW),       KEY("vgx", vgx, TELLO_F_VGX),
    KEY("vgy", vgy, TELLO_F_VGY),       KEY("vgz", vgz, TELLO_F_VGZ),
    KEY("templ", templ, TELLO_F_TEMPL), KEY("temph", temph, TELLO_F_TEMPH),
    KEY("tof", tof, TELLO_F_TOF),       KEY("h", h, TELLO_F_H),
    KEY("bat", bat, TELLO_F_BAT),       KEY("baro", baro, TELLO_F_BARO),
    KEY("time", time, TELLO_F_TIME),    KEY("agx", agx, TELLO_F_AGX),
    KEY("agy", agy, TELLO_F_AGY),       KEY("agz", agz, TELLO_F_AGZ),
    KEY("mid", mid, TELLO_F_MID),       KEY("x", mx, TELLO_F_MX),
    KEY("y", my, TELLO_F_MY),           KEY("z", mz, TELLO_F_MZ),
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
