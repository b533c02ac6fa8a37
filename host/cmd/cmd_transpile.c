/* aloft transpile [--skills DIR] FILE|-: print the Lua a MiniSpec plan compiles to. */
#include "cmd/cli.h"
#include "minispec/minispec.h"

#include <stdio.h>
#include <stdlib.h>

static const char usage[] =
    "Usage: aloft transpile [--skills DIR]... FILE|-\n"
    "\n"
    "Print the Lua a MiniSpec plan compiles to (run by the mission controller in\n"
    "the sandbox, with lua/minispec.lua as its runtime). An invalid plan prints\n"
    "its diagnostics (LINE:COL: message) on stderr instead.\n"
    "\n"
    "  --skills DIR   also load the *.lua skill files of DIR (repeatable)\n"
    "\n"
    "Exit status: 0, 1 invalid plan or unreadable file, 2 usage error.\n";

int cmd_transpile(int argc, char **argv)
{
    cli_common c = {.cmd = "transpile"};
    static const struct option opts[] = {CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (opt == 'h') opt = OPT_HELP;
        int r = cli_common_option(&c, opt, optarg);
        if (r < 0) return CLI_USAGE;
        if (r == 0 || opt == OPT_JSON) return cli_usage_error(c.cmd, "unknown option");
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
    if (r.ok) fputs(r.lua, stdout);
    for (int i = 0; i < r.ndiags; i++)
        fprintf(stderr, "%d:%d: %s\n", r.diags[i].line, r.diags[i].col, r.diags[i].message);
    int rc = r.ok ? CLI_OK : CLI_FAIL;
    ms_result_free(&r);
    registry_free(reg);
    free(src);
    return rc;
}
