/*
 * The Tello's configuration and its command-line options (SPEC §9).
 */
#include "drone/tello.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tello_config_init(tello_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->host, sizeof cfg->host, "%s", TELLO_DEFAULT_HOST);
    cfg->port = 8889;
    cfg->state_port = 8890;
    cfg->video_port = 11111;
    cfg->timeout_ms = 7000;
    cfg->takeoff_timeout_ms = 20000;
    cfg->retries = 3;
    cfg->battery_min = 20;
    cfg->keepalive_ms = 10000;
    cfg->video = true;
    cfg->land_at_end = true;
}

/* A whole decimal integer in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* --drone tello | tello:HOST; other drivers are not ours. */
static int parse_drone(tello_config *cfg, const char *value, char *err, size_t errlen)
{
    if (!value || strncmp(value, "tello", 5) != 0 || (value[5] && value[5] != ':')) return 0;
    if (!value[5]) {
        snprintf(cfg->host, sizeof cfg->host, "%s", TELLO_DEFAULT_HOST);
        return 1;
    }
    const char *host = value + 6;
    if (!*host || strlen(host) >= sizeof cfg->host || strpbrk(host, " \t/:")) {
        snprintf(err, errlen, "--drone %s: expected tello or tello:HOST (an address such as %s)",
                 value, TELLO_DEFAULT_HOST);
        return -1;
    }
    snprintf(cfg->host, sizeof cfg->host, "%s", host);
    return 1;
}

int tello_config_option(tello_config *cfg, const char *name, const char *value, char *err,
                        size_t errlen)
{
    static const struct {
        const char *name;
        size_t offset;
        long lo, hi;
        const char *what;
    } numeric[] = {
        {"tello-port", offsetof(tello_config, port), 1, 65535, "a port number (1-65535)"},
        {"tello-state-port", offsetof(tello_config, state_port), 1, 65535,
         "a port number (1-65535)"},
        {"tello-video-port", offsetof(tello_config, video_port), 1, 65535,
         "a port number (1-65535)"},
        {"tello-timeout-ms", offsetof(tello_config, timeout_ms), 1, 600000,
         "milliseconds (1-600000)"},
    };
    if (!name) return 0;
    if (strcmp(name, "drone") == 0) return parse_drone(cfg, value, err, errlen);
    if (strcmp(name, "no-video") == 0) {
        cfg->video = false;
        return 1;
    }
    if (strcmp(name, "no-land") == 0) {
        cfg->land_at_end = false;
        return 1;
    }
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++) {
        if (strcmp(name, numeric[i].name) != 0) continue;
        int *slot = (int *)((char *)cfg + numeric[i].offset);
        if (parse_int(value, numeric[i].lo, numeric[i].hi, slot) < 0) {
            snprintf(err, errlen, "--%s '%s': expected %s", name, value ? value : "",
                     numeric[i].what);
            return -1;
        }
        return 1;
    }
    return 0;
}

const char *tello_video_source(const tello_config *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "tello:%d", cfg->video_port);
    return buf;
}
