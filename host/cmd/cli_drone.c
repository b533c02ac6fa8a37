/* The drone a command flies, from its options: see cli_drone.h. */
#include "cmd/cli_drone.h"

#include <stdio.h>
#include <string.h>

void cli_drone_init(cli_drone *d)
{
    memset(d, 0, sizeof *d);
    tello_config_init(&d->tello);
    mavlink_config_init(&d->mavlink);
}

/* --drone sim|tello[:HOST]|mavlink[:URL]. */
static int drone_option(cli_drone *d, const char *cmd, const char *arg)
{
    char err[512];
    int r = tello_config_option(&d->tello, "drone", arg, err, sizeof err);
    if (r < 0) return cli_usage_error(cmd, "%s", err), -1;
    d->on_tello = r == 1;
    d->on_mavlink = false;
    if (r == 1) return 1;
    r = mavlink_config_option(&d->mavlink, "drone", arg, err, sizeof err);
    if (r < 0) return cli_usage_error(cmd, "%s", err), -1;
    if (r == 0 && strcmp(arg, "sim") != 0)
        return cli_usage_error(cmd,
                               "--drone %s: expected sim, tello, tello:HOST, mavlink or "
                               "mavlink:URL",
                               arg),
               -1;
    d->on_mavlink = r == 1;
    return 1;
}

int cli_drone_option(cli_drone *d, const char *cmd, int opt, const char *name, const char *arg)
{
    char err[512];
    switch (opt) {
    case OPT_DRONE: return drone_option(d, cmd, arg);
    case OPT_MAVLINK:
        if (mavlink_config_option(&d->mavlink, name, arg, err, sizeof err) != 1)
            return cli_usage_error(cmd, "%s", err), -1;
        d->mavlink_options = true;
        return 1;
    case OPT_TELLO:
        if (strcmp(name, "no-land") == 0) { /* Tello and MAVLink */
            d->no_land = true;
            d->tello.land_at_end = d->mavlink.land_at_end = false;
            return 1;
        }
        if (tello_config_option(&d->tello, name, arg, err, sizeof err) != 1)
            return cli_usage_error(cmd, "%s", err), -1;
        d->tello_options = true;
        return 1;
    default: return 0;
    }
}

int cli_drone_check(const cli_drone *d, const char *cmd)
{
    if (d->tello_options && !d->on_tello)
        return cli_usage_error(cmd, "--tello-* and --no-video need --drone tello");
    if (d->mavlink_options && !d->on_mavlink)
        return cli_usage_error(cmd, "--mavlink-* options need --drone mavlink");
    if (d->no_land && !d->on_tello && !d->on_mavlink)
        return cli_usage_error(cmd, "--no-land needs --drone tello or --drone mavlink");
    return -1;
}

void cli_drone_flight(const cli_drone *d, flight_config *c, char *name, size_t namelen)
{
    if (d->on_tello) {
        c->tello = &d->tello;
        snprintf(name, namelen, "tello:%s", d->tello.host);
        c->drone_name = name;
        c->land = d->tello.land_at_end;
    } else if (d->on_mavlink) {
        c->mavlink = &d->mavlink;
        c->drone_name = mavlink_config_name(&d->mavlink, name, namelen);
        c->land = d->mavlink.land_at_end;
    }
}
