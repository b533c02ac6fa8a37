/*
 * A MAVLink drone named in one word, for `aloft serve --drone`, where every
 * drone has its own link and vehicle: "mavlink[:URL][,sysid=N]". The suffix
 * is --mavlink-sysid for that drone alone (a comma cannot occur in a link
 * URL, so the split is unambiguous).
 */
#include "drone/mavlink.h"
#include "errmsg.h"

#include <stdio.h>
#include <string.h>

#define SYSID_SUFFIX ",sysid="

int mavlink_config_spec(mavlink_config *cfg, const char *spec, char *err, size_t errlen)
{
    const char *suffix = strstr(spec, SYSID_SUFFIX);
    if (!suffix) return mavlink_config_option(cfg, "drone", spec, err, errlen);
    char link[sizeof cfg->url + 64];
    size_t n = (size_t)(suffix - spec);
    if (n >= sizeof link) return errmsg_set(err, errlen, "--drone %.40s...: too long", spec);
    memcpy(link, spec, n);
    link[n] = '\0';
    int r = mavlink_config_option(cfg, "drone", link, err, errlen);
    if (r != 1) return r;
    const char *id = suffix + strlen(SYSID_SUFFIX);
    char msg[200];
    if (mavlink_config_option(cfg, "mavlink-sysid", id, msg, sizeof msg) != 1)
        return errmsg_set(err, errlen, "--drone %s: sysid=%s: %s", spec, id, msg);
    return 1;
}
