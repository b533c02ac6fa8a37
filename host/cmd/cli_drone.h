/*
 * The drone a command flies, from its options (SPEC §2): --drone
 * sim|tello[:HOST]|mavlink[:URL], the Tello's --tello-* and --no-video, the
 * MAVLink vehicle's --mavlink-*, and --no-land for either. `aloft run`
 * takes them; a front end that flies one drone from a command line may too.
 */
#ifndef ALOFT_CMD_CLI_DRONE_H
#define ALOFT_CMD_CLI_DRONE_H

#include "cmd/cli.h"
#include "drone/mavlink.h"
#include "drone/tello.h"
#include "mission/flight.h"

#define CLI_DRONE_OPTIONS                                                                          \
    {"drone", required_argument, 0, OPT_DRONE}, TELLO_LONG_OPTIONS(OPT_TELLO),                     \
        MAVLINK_LONG_OPTIONS(OPT_MAVLINK)

typedef struct cli_drone {
    tello_config tello;
    bool on_tello;      /* --drone tello[:HOST] */
    bool tello_options; /* a Tello option other than --drone was given */
    mavlink_config mavlink;
    bool on_mavlink;      /* --drone mavlink[:URL] */
    bool mavlink_options; /* a --mavlink-* option was given */
    bool no_land;
} cli_drone;

/* The simulator, the drivers' defaults. */
void cli_drone_init(cli_drone *d);

/* Handles one of CLI_DRONE_OPTIONS (NAME: its long name, which tells the
 * Tello's and the MAVLink vehicle's options apart). Returns 1 when OPT was
 * one (and stored), 0 when not, or -1 after a usage error. */
int cli_drone_option(cli_drone *d, const char *cmd, int opt, const char *name, const char *arg);

/* The driver options fit the drone: -1, or the exit status of the usage
 * error. */
int cli_drone_check(const cli_drone *d, const char *cmd);

/* Points C at D's drone (the simulator: C unchanged), with the name it is
 * recorded under in NAME. */
void cli_drone_flight(const cli_drone *d, flight_config *c, char *name, size_t namelen);

#endif
