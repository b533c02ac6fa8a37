/*
 * The MAVLink driver's configuration and its command-line options (SPEC §9).
 */
#include "drone/mavlink.h"

#include "errmsg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mavlink_config_init(mavlink_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    mavlink_url_parse(MAVLINK_DEFAULT_URL, &cfg->url, NULL, 0);
    cfg->our_sysid = 255;
    cfg->our_compid = 190;
    cfg->ready_timeout_ms = 90000;
    cfg->takeoff_cm = 250;
    cfg->battery_min = 20;
    cfg->silent_ms = 3000;
    cfg->tolerance_cm = 30;
    cfg->yaw_tolerance_deg = 5;
    cfg->speed_cm_s = 100;
    cfg->land_at_end = true;
    cfg->progress = stderr;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s || *s == '+' || *s == ' ') return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* --drone mavlink | mavlink:URL; other drivers are not ours. */
static int parse_drone(mavlink_config *cfg, const char *value, char *err, size_t errlen)
{
    if (!value || strncmp(value, "mavlink", 7) != 0 || (value[7] && value[7] != ':')) return 0;
    if (!value[7]) return mavlink_url_parse(MAVLINK_DEFAULT_URL, &cfg->url, err, errlen) ? -1 : 1;
    char msg[400];
    if (mavlink_url_parse(value + 8, &cfg->url, msg, sizeof msg))
        return errmsg_set(err, errlen, "--drone %s: %s", value, msg);
    return 1;
}

int mavlink_config_option(mavlink_config *cfg, const char *name, const char *value, char *err,
                          size_t errlen)
{
    static const struct {
        const char *name;
        size_t offset;
        long lo, hi;
        const char *what;
    } numeric[] = {
        {"mavlink-sysid", offsetof(mavlink_config, sysid), 1, 255, "a system id (1-255)"},
        {"mavlink-our-sysid", offsetof(mavlink_config, our_sysid), 1, 255, "a system id (1-255)"},
        {"mavlink-our-compid", offsetof(mavlink_config, our_compid), 1, 255,
         "a component id (1-255)"},
        {"mavlink-takeoff-cm", offsetof(mavlink_config, takeoff_cm), 50, 10000,
         "centimetres (50-10000)"},
        {"mavlink-ready-timeout-ms", offsetof(mavlink_config, ready_timeout_ms), 1000, 3600000,
         "milliseconds (1000-3600000)"},
    };
    if (!name) return 0;
    if (strcmp(name, "drone") == 0) return parse_drone(cfg, value, err, errlen);
    if (strcmp(name, "no-land") == 0) {
        cfg->land_at_end = false;
        return 1;
    }
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++) {
        if (strcmp(name, numeric[i].name) != 0) continue;
        int *slot = (int *)((char *)cfg + numeric[i].offset);
        if (parse_int(value, numeric[i].lo, numeric[i].hi, slot) < 0)
            return errmsg_set(err, errlen, "--%s '%s': expected %s", name, value ? value : "",
                              numeric[i].what);
        return 1;
    }
    return 0;
}

const char *mavlink_config_name(const mavlink_config *cfg, char *buf, size_t len)
{
    char url[300];
    snprintf(buf, len, "mavlink:%s", mavlink_url_format(&cfg->url, url, sizeof url));
    return buf;
}
