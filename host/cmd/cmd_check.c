/* aloft check [--json] [--skills DIR] [--verify N --scene S [--seed K]] FILE|-:
 * parse and validate a MiniSpec plan, and optionally fly it in N sampled
 * worlds first (SPEC §14, host/verify/verify.h). */
#include "cmd/cli.h"
#include "minispec/minispec.h"
#include "verify/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft check [--json] [--skills DIR]... [--verify N --scene S [--seed K]]\n"
    "                   [limits] FILE|-\n"
    "\n"
    "Parse and validate a MiniSpec plan (both dialects): unknown skills, argument\n"
    "counts and types, variables used before assignment, loop bounds, syntax.\n"
    "Each problem is printed as LINE:COL: message.\n"
    "\n"
    "  --json         print "
    "{\"ok\",\"dialect\",\"errors\":[{\"line\",\"col\",\"message\"}],\"skills\"}\n"
    "                 (with --verify also \"verify\":{\"worlds\",\"seed\",\"passed\",\n"
    "                 "
    "\"failed\":[{\"world\",\"kind\",\"reason\",\"changes\",\"branch\",\"calls\"}]})\n"
    "  --skills DIR   also load the *.lua skill files of DIR (repeatable)\n"
    "  --verify N     also fly the valid plan in N worlds (1..10000) sampled from\n"
    "                 the scene, at instant time behind the constraint check:\n"
    "                 world 0 is the scene as written; the others may miss objects\n"
    "                 or have them moved, miss detections, and answer probe at\n"
    "                 random. Every world where the plan breaks a constraint\n"
    "                 (a refused or clamped motion), runs out of a budget or\n"
    "                 errors is printed with the branch it took.\n"
    "  --scene S      the scene the worlds are sampled from (needed by --verify)\n"
    "  --seed K       the worlds' seed (default 1): the same seed, the same worlds\n"
    "  --max-instructions N, --max-memory BYTES, --timeout-ms N\n"
    "                 the budgets of each world (as for aloft run)\n"
    "\n"
    "Exit status: 0 valid (and every world passed), 1 invalid plan, a world\n"
    "failed or unreadable file, 2 usage error.\n";

enum { OPT_VERIFY = OPT_FIRST_FREE }; /* --seed: cli.h's OPT_SEED */

typedef struct check_args {
    long worlds; /* --verify N, 0 when not given */
    unsigned long long seed;
} check_args;

static int on_option(void *ud, int opt, const char *arg)
{
    check_args *a = ud;
    unsigned long long v;
    switch (opt) {
    case OPT_VERIFY:
        if (cli_parse_u64(arg, false, &v) || v == 0)
            return cli_usage_error("check", "--verify: '%s' is not a positive number of worlds",
                                   arg);
        if (v > VERIFY_MAX_WORLDS)
            return cli_usage_error("check", "--verify: %s worlds is more than the %d allowed", arg,
                                   VERIFY_MAX_WORLDS);
        a->worlds = (long)v;
        return 0;
    case OPT_SEED:
        if (cli_parse_u64(arg, false, &a->seed))
            return cli_usage_error("check", "--seed: '%s' is not a number", arg);
        return 0;
    default: return cli_usage_error("check", "unknown option");
    }
}

static cJSON *check_json(const ms_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddBoolToObject(doc, "ok", r->ok);
    cJSON_AddStringToObject(doc, "dialect", r->dialect);
    cJSON *errors = cJSON_AddArrayToObject(doc, "errors");
    for (int i = 0; i < r->ndiags; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "line", r->diags[i].line);
        cJSON_AddNumberToObject(e, "col", r->diags[i].col);
        cJSON_AddStringToObject(e, "message", r->diags[i].message);
        cJSON_AddItemToArray(errors, e);
    }
    cJSON *skills = cJSON_AddArrayToObject(doc, "skills");
    for (int i = 0; i < r->nskills; i++)
        cJSON_AddItemToArray(skills, cJSON_CreateString(r->skills[i]));
    return doc;
}

/* Ctrl-C stops the world being flown. */
static void set_cancel(void *ud, sandbox *sb)
{
    (void)ud;
    cli_cancel_sandbox(sb);
}

/* Flies the valid plan SRC in the worlds of A; returns the report, or NULL
 * after printing why (*RC then says the exit status). */
static cJSON *verify(const cli_common *c, const check_args *a, const skill_registry *reg,
                     const char *src, size_t len, verify_summary *sum, int *rc)
{
    scene *sc = malloc(sizeof *sc);
    char err[1024];
    if (!sc || scene_load(sc, c->scene, err, sizeof err)) {
        *rc = sc ? cli_fail(c->cmd, "%s", err) : cli_fail(c->cmd, "out of memory");
        free(sc);
        return NULL;
    }
    verify_opts vo = {
        .reg = reg,
        .scene = sc,
        .plan = src,
        .plan_len = len,
        .worlds = (int)a->worlds,
        .seed = a->seed,
        .limits = cli_limits(c),
        .on_sandbox = set_cancel,
    };
    cli_cancel_begin();
    cJSON *rep = verify_plan(&vo, sum, err, sizeof err);
    cli_cancel_end();
    free(sc);
    if (!rep) *rc = cli_fail(c->cmd, "%s", err);
    return rep;
}

int cmd_check(int argc, char **argv)
{
    cli_common c = {.cmd = "check"};
    check_args a = {.seed = 1};
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_LIMIT_OPTIONS,
        {"verify", required_argument, 0, OPT_VERIFY},
        {"scene", required_argument, 0, OPT_SCENE},
        {"seed", required_argument, 0, OPT_SEED},
        {0, 0, 0, 0},
    };
    int rc = cli_parse_options(&c, argc, argv, opts, usage, on_option, &a);
    if (rc >= 0) return rc;
    if (a.worlds && !c.scene)
        return cli_usage_error(c.cmd, "--verify needs --scene FILE to sample worlds from");
    if (c.scene && !a.worlds) return cli_usage_error(c.cmd, "--scene is used with --verify N");
    cli_plan p;
    if ((rc = cli_plan_compile(&c, argc, argv, &p)) >= 0) return rc;
    const ms_result *r = &p.r;
    const char *src = p.src;
    size_t len = p.len;
    rc = r->ok ? CLI_OK : CLI_FAIL;
    cJSON *rep = NULL;
    verify_summary sum;
    if (r->ok && a.worlds) {
        rep = verify(&c, &a, p.reg, src, len, &sum, &rc);
        if (rep && (sum.failed || sum.cancelled)) rc = CLI_FAIL;
    }
    if (c.json) {
        cJSON *doc = check_json(r);
        if (a.worlds) {
            if (rep)
                cJSON_AddItemToObject(doc, "verify", rep);
            else
                cJSON_AddNullToObject(doc, "verify");
            rep = NULL;
        }
        if (cli_print_json(doc) != CLI_OK) rc = CLI_FAIL;
    } else {
        cli_plan_print_diagnostics(&p);
        /* Valid, as `aloft run` flies it (takeoff, nothing, land), but
         * worth a word: an LLM's empty reply looks like this. */
        bool empty = strspn(src, " \t\r\n;") == len;
        if (r->ok && empty)
            printf("ok (empty: the plan does nothing)\n");
        else if (r->ok)
            printf("ok (%s)\n", r->dialect);
        if (rep) verify_print(stdout, rep);
    }
    cJSON_Delete(rep);
    cli_plan_free(&p);
    return rc;
}
