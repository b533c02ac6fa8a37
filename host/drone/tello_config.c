/*
 * The Tello's configuration and its command-line options (SPEC §9).
 */
#include "drone/tello.h"

#include "drone/driver_option.h"
#include "errmsg.h"

#include <stdio.h>
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

/* --drone tello | tello:HOST; other drivers are not ours. */
static int parse_drone(tello_config *cfg, const char *value, char *err, size_t errlen)
{
    const char *host;
    if (!driver_drone_arg(value, "tello", &host)) return 0;
    if (!host) host = TELLO_DEFAULT_HOST;
    if (!*host || strlen(host) >= sizeof cfg->host || strpbrk(host, " \t/:"))
        return errmsg_set(err, errlen,
                          "--drone %s: expected tello or tello:HOST (an address such as %s)", value,
                          TELLO_DEFAULT_HOST);
    snprintf(cfg->host, sizeof cfg->host, "%s", host);
    return 1;
}

static const driver_option options[] = {
    DRIVER_INT("tello-port", tello_config, port, 1, 65535, "a port number (1-65535)"),
    DRIVER_INT("tello-state-port", tello_config, state_port, 1, 65535, "a port number (1-65535)"),
    DRIVER_INT("tello-video-port", tello_config, video_port, 1, 65535, "a port number (1-65535)"),
    DRIVER_INT("tello-timeout-ms", tello_config, timeout_ms, 1, 600000, "milliseconds (1-600000)"),
    DRIVER_OFF("no-video", tello_config, video),
    DRIVER_OFF("no-land", tello_config, land_at_end),
};

int tello_config_option(tello_config *cfg, const char *name, const char *value, char *err,
                        size_t errlen)
{
    if (name && strcmp(name, "drone") == 0) return parse_drone(cfg, value, err, errlen);
    return driver_option_apply(cfg, options, sizeof options / sizeof options[0], name, value, err,
                               errlen);
}

const char *tello_video_source(const tello_config *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "tello:%d", cfg->video_port);
    return buf;
}
