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

int cmd_check(int argc, char **argv)
{
    cli_common c = {.cmd = "check"};
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        {"verify", required_argument, 0, OPT_VERIFY},
        {"scene", required_argument, 0, OPT_SCENE},
        {0, 0, 0, 0},
    };
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (opt == 'h') opt = OPT_HELP;
        if (opt == OPT_VERIFY || opt == OPT_SCENE)
            return cli_usage_error(c.cmd, "--verify and --scene are not supported yet");
        int r = cli_common_option(&c, opt, optarg);
        if (r < 0) return CLI_USAGE;
        if (r == 0) return cli_usage_error(c.cmd, "unknown option");
    }
    if (c.help) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (optind != argc - 1)
        return cli_usage_error(c.cmd, optind == argc ? "missing FILE (or - for stdin)"
                                                     : "expected one FILE");
    char err[512];
    size_t len;
    char *src = cli_read_input(argv[optind], CLI_MAX_INPUT, &len, err, sizeof err);
    if (!src) return cli_fail(c.cmd, "%s", err);
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
    int rc = r.ok ? CLI_OK : CLI_FAIL;
    ms_result_free(&r);
    registry_free(reg);
    free(src);
    return rc;
}
