/*
 * High-level skills defined in MiniSpec (a skill file with `minispec=`):
 * compiled once, when the registry is finalised, into a Lua chunk that
 * returns the skill's function. Diagnostics point into the skill file.
 */
#include "minispec/minispec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int minispec_compile_skill(const skill_registry *reg, skill *s, char *err, size_t errlen)
{
    if (!s->minispec) {
        snprintf(err, errlen, "%s: no minispec definition", s->path ? s->path : s->name);
        return -1;
    }
    ms_result r;
    if (minispec_compile_definition(reg, s->minispec, strlen(s->minispec), s->nargs, NULL, &r)) {
        const ms_diag *d = r.ndiags ? &r.diags[0] : NULL;
        snprintf(err, errlen, "minispec %d:%d: %s%s", d ? d->line : 0, d ? d->col : 0,
                 d ? d->message : "invalid definition", r.ndiags > 1 ? " (and more)" : "");
        ms_result_free(&r);
        return -1;
    }
    s->lua_code = strdup(r.lua);
    ms_result_free(&r);
    if (!s->lua_code) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
