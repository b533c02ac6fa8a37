/* aloft check [--json] [--skills DIR] FILE|-: parse and validate a MiniSpec plan. */
#include "cmd/cli.h"
#include "minispec/minispec.h"

#include <stdio.h>
#include <stdlib.h>

static const char usage[] =
    "Usage: aloft check [--json] [--skills DIR]... FILE|-\n"
    "\n"
    "Parse and validate a MiniSpec plan (both dialects): unknown skills, argument\n"
    "counts and types, variables used before assignment, loop bounds, syntax.\n"
    "Each problem is printed as LINE:COL: message.\n"
    "\n"
    "  --json         print "
    "{\"ok\",\"dialect\",\"errors\":[{\"line\",\"col\",\"message\"}],\"skills\"}\n"
    "  --skills DIR   also load the *.lua skill files of DIR (repeatable)\n"
    "\n"
    "Exit status: 0 valid, 1 invalid plan or unreadable file, 2 usage error.\n"
    "(--verify N --scene S, checking a plan in sampled worlds, is not available yet.)\n";

enum { OPT_VERIFY = OPT_FIRST_FREE };

static int refuse_verify(void *ud, int opt, const char *arg)
{
    (void)ud;
    (void)arg;
    if (opt == OPT_VERIFY || opt == OPT_SCENE)
        return cli_usage_error("check", "--verify and --scene are not supported yet");
    return cli_usage_error("check", "unknown option");
}

int cmd_check(int argc, char **argv)
{
    cli_common c = {.cmd = "check"};
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        {"verify", required_argument, 0, OPT_VERIFY},
        {"scene", required_argument, 0, OPT_SCENE},
        {0, 0, 0, 0},
    };
    int rc = cli_parse_options(&c, argc, argv, opts, usage, refuse_verify, NULL);
    if (rc >= 0) return rc;
    if (c.scene) return refuse_verify(NULL, OPT_SCENE, NULL);
    size_t len;
    char *src = cli_read_one_input(&c, argc, argv, &len, &rc);
    if (!src) return rc;
    skill_registry *reg = cli_load_registry(&c);
    if (!reg) {
        free(src);
        return cli_fail(c.cmd, "the built-in skills failed to load");
    }
    ms_result r;
    minispec_compile(reg, src, len, NULL, &r);
    if (c.json) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddBoolToObject(doc, "ok", r.ok);
        cJSON_AddStringToObject(doc, "dialect", r.dialect);
        cJSON *errors = cJSON_AddArrayToObject(doc, "errors");
        for (int i = 0; i < r.ndiags; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "line", r.diags[i].line);
            cJSON_AddNumberToObject(e, "col", r.diags[i].col);
            cJSON_AddStringToObject(e, "message", r.diags[i].message);
            cJSON_AddItemToArray(errors, e);
        }
        cJSON *skills = cJSON_AddArrayToObject(doc, "skills");
        for (int i = 0; i < r.nskills; i++)
            cJSON_AddItemToArray(skills, cJSON_CreateString(r.skills[i]));
        cli_print_json(doc);
    } else {
        for (int i = 0; i < r.ndiags; i++)
            fprintf(stderr, "%d:%d: %s\n", r.diags[i].line, r.diags[i].col, r.diags[i].message);
        if (r.ok) printf("ok (%s)\n", r.dialect);
    }
    rc = r.ok ? CLI_OK : CLI_FAIL;
    ms_result_free(&r);
    registry_free(reg);
    free(src);
    return rc;
}
