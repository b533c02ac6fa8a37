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
    int rc = cli_parse_options(&c, argc, argv, opts, usage, NULL, NULL);
    if (rc >= 0) return rc;
    if (c.json) return cli_usage_error(c.cmd, "--json is not an option of transpile");
    cli_plan p;
    if ((rc = cli_plan_compile(&c, argc, argv, &p)) >= 0) return rc;
    if (p.r.ok) fputs(p.r.lua, stdout);
    cli_plan_print_diagnostics(&p);
    rc = p.r.ok ? CLI_OK : CLI_FAIL;
    cli_plan_free(&p);
    return rc;
}
