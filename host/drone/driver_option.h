/*
 * The command-line options of a driver's configuration (tello_config,
 * mavlink_config), read by one rule: each driver lists its options in a
 * table and hands a long option's name and argument to driver_option_apply.
 * Whole numbers are read by number_parse_int (host/number.h), so "+80",
 * " 80" or "80x" are refused alike by every driver.
 */
#ifndef ALOFT_DRONE_DRIVER_OPTION_H
#define ALOFT_DRONE_DRIVER_OPTION_H

#include <stddef.h>

typedef enum driver_option_kind {
    DRIVER_OPT_INT, /* an int member: a whole number in [lo, hi] */
    DRIVER_OPT_OFF, /* a bool member set to false; the option takes no value */
} driver_option_kind;

typedef struct driver_option {
    const char *name; /* the long option's name, without "--" */
    driver_option_kind kind;
    size_t offset; /* of the member in the configuration struct */
    long lo, hi;
    const char *what; /* what the value must be, for the error ("a port number (1-65535)") */
} driver_option;

#define DRIVER_INT(name, type, member, lo, hi, what)                                               \
    {                                                                                              \
        name, DRIVER_OPT_INT, offsetof(type, member), lo, hi, what                                 \
    }
#define DRIVER_OFF(name, type, member)                                                             \
    {                                                                                              \
        name, DRIVER_OPT_OFF, offsetof(type, member), 0, 0, NULL                                   \
    }

/* Applies option NAME with VALUE to CFG, a configuration struct that TABLE
 * (N entries) describes: 1 when applied, 0 when NAME is not in TABLE, -1
 * with "--NAME 'VALUE': expected WHAT" in ERR when VALUE is not a whole
 * number in range (CFG is then unchanged). */
int driver_option_apply(void *cfg, const driver_option *table, size_t n, const char *name,
                        const char *value, char *err, size_t errlen);

/* Whether `--drone VALUE` names the driver DRIVER ("tello", "tello:HOST"):
 * 1 with *ARG NULL for the bare name or the text after "DRIVER:" (which may
 * be empty), 0 when VALUE names another driver. */
int driver_drone_arg(const char *value, const char *driver, const char **arg);

#endif
