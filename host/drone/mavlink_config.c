/*
 * The MAVLink driver's configuration and its command-line options (SPEC §9).
 */
#include "drone/mavlink.h"

#include "drone/driver_option.h"

#include "errmsg.h"

#include <stdio.h>
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

/* --drone mavlink | mavlink:URL; other drivers are not ours. */
static int parse_drone(mavlink_config *cfg, const char *value, char *err, size_t errlen)
{
    const char *url;
    if (!driver_drone_arg(value, "mavlink", &url)) return 0;
    if (!url) return mavlink_url_parse(MAVLINK_DEFAULT_URL, &cfg->url, err, errlen) ? -1 : 1;
    char msg[400];
    if (mavlink_url_parse(url, &cfg->url, msg, sizeof msg))
        return errmsg_set(err, errlen, "--drone %s: %s", value, msg);
    return 1;
}

static const driver_option options[] = {
    DRIVER_INT("mavlink-sysid", mavlink_config, sysid, 1, 255, "a system id (1-255)"),
    DRIVER_INT("mavlink-our-sysid", mavlink_config, our_sysid, 1, 255, "a system id (1-255)"),
    DRIVER_INT("mavlink-our-compid", mavlink_config, our_compid, 1, 255, "a component id (1-255)"),
    DRIVER_INT("mavlink-takeoff-cm", mavlink_config, takeoff_cm, 50, 10000,
               "centimetres (50-10000)"),
    DRIVER_INT("mavlink-ready-timeout-ms", mavlink_config, ready_timeout_ms, 1000, 3600000,
               "milliseconds (1000-3600000)"),
    DRIVER_OFF("no-land", mavlink_config, land_at_end),
};

int mavlink_config_option(mavlink_config *cfg, const char *name, const char *value, char *err,
                          size_t errlen)
{
    if (name && strcmp(name, "drone") == 0) return parse_drone(cfg, value, err, errlen);
    return driver_option_apply(cfg, options, sizeof options / sizeof options[0], name, value, err,
                               errlen);
}

const char *mavlink_config_name(const mavlink_config *cfg, char *buf, size_t len)
{
    char url[300];
    snprintf(buf, len, "mavlink:%s", mavlink_url_format(&cfg->url, url, sizeof url));
    return buf;
}
