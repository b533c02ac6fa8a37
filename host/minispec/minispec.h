/*
 * The MiniSpec compiler (SPEC §4): lexer, incremental parser, checker and Lua
 * emitter for both dialects.
 *
 * The whole-plan entry point is minispec_compile. The incremental parser used
 * for stream interpreting is declared further down by its module.
 */
#ifndef ALOFT_MINISPEC_MINISPEC_H
#define ALOFT_MINISPEC_MINISPEC_H

#include "skills/registry.h"

#include <stdbool.h>
#include <stddef.h>

#define MS_MAX_LOOP_DEFAULT 1000

typedef struct ms_diag {
    int line, col; /* 1-based */
    char message[256];
} ms_diag;

typedef struct ms_options {
    int max_loop; /* largest loop count; 0 = MS_MAX_LOOP_DEFAULT */
    int nparams;  /* > 0 when compiling a skill definition: $1..$nparams allowed */
} ms_options;

typedef struct ms_result {
    bool ok;
    char *lua;      /* the Lua chunk when ok (see lua/minispec.lua); in the
                       skills' allocation: copy it to keep it */
    ms_diag *diags; /* every independent error, in source order */
    int ndiags;
    const char *dialect; /* "v1", "v2" or "mixed" */
    char **skills;       /* full names of the skills used, in first-use order
                            (NULL-terminated; one allocation with the names
                            and the Lua) */
    int nskills;
} ms_result;

/* Compiles a whole plan. Returns 0 when the plan is valid (out->ok), -1
 * otherwise; diagnostics are in OUT either way. Free with ms_result_free. */
int minispec_compile(const skill_registry *reg, const char *src, size_t len, const ms_options *opts,
                     ms_result *out);
void ms_result_free(ms_result *r);

/* Compiles a skill definition (`8{?iv,$1==True{->True}tc,45}->False`) whose
 * skill takes NPARAMS arguments ($1..$NPARAMS). On success out->lua is a
 * chunk returning the skill's function `function(a1, ..., aN)`. */
int minispec_compile_definition(const skill_registry *reg, const char *src, size_t len, int nparams,
                                const ms_options *opts, ms_result *out);

/* Compiles the minispec= definition of high-level skill S into S->lua_code
 * (a chunk returning the skill's run function). Called by loader_finalize
 * once every skill is known. Returns 0, or -1 with "line:col: message" in ERR. */
int minispec_compile_skill(const skill_registry *reg, skill *s, char *err, size_t errlen);

#endif
