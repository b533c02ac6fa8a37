/*
 * The drivers' option tables (see driver_option.h).
 */
#include "drone/driver_option.h"

#include "errmsg.h"
#include "number.h"

#include <stdbool.h>
#include <string.h>

int driver_option_apply(void *cfg, const driver_option *table, size_t n, const char *name,
                        const char *value, char *err, size_t errlen)
{
    if (!name) return 0;
    for (size_t i = 0; i < n; i++) {
        const driver_option *o = &table[i];
        if (strcmp(name, o->name) != 0) continue;
        void *member = (char *)cfg + o->offset;
        if (o->kind == DRIVER_OPT_OFF) {
            *(bool *)member = false;
            return 1;
        }
        if (number_parse_int(value, o->lo, o->hi, member) < 0)
            return errmsg_set(err, errlen, "--%s '%s': expected %s", name, value ? value : "",
                              o->what);
        return 1;
    }
    return 0;
}

int driver_drone_arg(const char *value, const char *driver, const char **arg)
{
    size_t n = strlen(driver);
    if (!value || strncmp(value, driver, n) != 0 || (value[n] && value[n] != ':')) return 0;
    *arg = value[n] ? value + n + 1 : NULL;
    return 1;
}
