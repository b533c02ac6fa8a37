/* aloft lua [--scene S] SCRIPT.lua|- [limits]: run a script in the sandbox with
 * every skill bound. This is the skill author's workbench. */
#include "cmd/cli.h"
#include "mission/runner.h"
#include "mission/watchdog.h"
#include "skills/skills.h"
#include "worker/vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft lua [options] SCRIPT.lua|-\n"
    "\n"
    "Run a Lua 5.4 script in the mission sandbox with every skill bound as a\n"
    "global function (turn_cw(90), is_visible('apple'), log('hi'), ...).\n"
    "Without a scene, skills that need a drone fail with an error.\n"
    "\n"
    "  --scene FILE             fly in the simulator with this scene\n"
    "  --skills DIR             also load the skill files of DIR (repeatable)\n"
    "  --max-instructions N     instruction budget (default 10000000)\n"
    "  --max-memory BYTES       memory cap, k/M/G suffixes allowed (default 16M)\n"
    "  --timeout-ms N           wall-clock limit (default 300000)\n"
    "  --in-process             run Lua in this process, not in a worker (debugging\n"
    "                           only: a crash of the VM then ends aloft)\n"
    "  --json                   print {\"ok\",\"error\",\"limit\",\"logs\",\"calls\",\n"
    "                           \"instructions\",\"memory_peak\"}\n"
    "\n"
    "Exit status: 0 if the script ran to its end, 1 if it failed or hit a limit,\n"
    "2 on a usage error.\n";

static void echo_output(void *ud, const char *text, size_t len)
{
    fwrite(text, 1, len, (FILE *)ud);
    fflush((FILE *)ud);
}

/* The output split into lines, for the JSON "logs" list. */
static cJSON *output_lines(const sandbox *sb)
{
    cJSON *logs = cJSON_CreateArray();
    size_t len;
    const char *out = sandbox_output(sb, &len);
    const char *end = out + len;
    while (out < end) {
        const char *nl = memchr(out, '\n', (size_t)(end - out));
        size_t n = nl ? (size_t)(nl - out) : (size_t)(end - out);
        char *line = strndup(out, n);
        cJSON_AddItemToArray(logs, cJSON_CreateString(line));
        free(line);
        out += n + (nl ? 1 : 0);
    }
    if (sandbox_output_truncated(sb))
        cJSON_AddItemToArray(logs, cJSON_CreateString("[output truncated]"));
    return logs;
}

/* What the watchdog needs to end a hung script (cli_cancel_on_hang). */
typedef struct lua_hang {
    bool json;
    mission_world *world;
} lua_hang;

/* On the watchdog's thread, the script's thread being stuck: land, then
 * report without touching the sandbox that thread holds. */
static void on_hang(void *ud, const char *msg)
{
    lua_hang *h = ud;
    char why[1024];
    watchdog_end_mission(h->world, NULL, msg, why, sizeof why);
    if (!h->json) {
        fprintf(stderr, "aloft lua: %s\n", why);
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddFalseToObject(doc, "ok");
    cJSON_AddStringToObject(doc, "error", why);
    cJSON_AddStringToObject(doc, "limit", "hung");
    cJSON_AddArrayToObject(doc, "logs");
    cJSON_AddArrayToObject(doc, "calls");
    cJSON_AddNumberToObject(doc, "instructions", 0);
    cJSON_AddNumberToObject(doc, "memory_peak", 0);
    cli_print_json(doc);
}

int cmd_lua(int argc, char **argv)
{
    cli_common c = {.cmd = "lua"};
    static const struct option opts[] = {CLI_COMMON_OPTIONS,
                                         CLI_LIMIT_OPTIONS,
                                         {"scene", required_argument, 0, OPT_SCENE},
                                         {0, 0, 0, 0}};
    int rc = cli_parse_options(&c, argc, argv, opts, usage, NULL, NULL);
    if (rc >= 0) return rc;
    if (optind != argc - 1)
        return cli_usage_error(c.cmd, optind == argc ? "missing SCRIPT.lua (or - for stdin)"
                                                     : "only one script may be given");
    const char *path = argv[optind];

    char err[1024];
    size_t len;
    char *code = cli_read_input(path, CLI_MAX_INPUT, &len, err, sizeof err);
    if (!code) return cli_fail(c.cmd, "%s", err);

    skill_registry *reg = cli_load_registry(&c);
    if (!reg) {
        free(code);
        return CLI_FAIL;
    }
    sandbox_limits lim = cli_limits(&c);
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    if (!sb) {
        registry_free(reg);
        free(code);
        return cli_fail(c.cmd, "%s", err);
    }
    sandbox_set_output_hook(sb, echo_output, c.json ? stderr : stdout);
    skill_ctx ctx = {.reg = reg, .sb = sb};
    mission_world world = {0};
    if (c.scene) {
        sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL}; /* instant, seed 1 */
        if (mission_world_sim(&world, c.scene, &so, err, sizeof err)) {
            sandbox_free(sb);
            registry_free(reg);
            free(code);
            return cli_fail(c.cmd, "%s", err);
        }
        mission_world_attach(&world, &ctx);
    }
    int status = CLI_FAIL;
    sandbox_status st = SANDBOX_ERROR;
    vm *v = NULL;
    sandbox_usage use = {0};
    if (skills_bind(&ctx, err, sizeof err) == 0 &&
        (v = vm_open(&ctx, &lim, false, err, sizeof err))) {
        char chunk[512];
        snprintf(chunk, sizeof chunk, "%s%s", strcmp(path, "-") ? "@" : "=",
                 strcmp(path, "-") ? path : "stdin");
        lua_hang hang = {c.json, &world};
        cli_cancel_on_hang(on_hang, &hang);
        cli_cancel_begin();
        cli_cancel_sandbox(sb);
        st = vm_run_script(v, code, len, chunk, err, sizeof err);
        cli_cancel_end();
        status = st == SANDBOX_OK ? CLI_OK : CLI_FAIL;
        use = vm_usage(v);
    }
    vm_close(v);
    if (c.json) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddBoolToObject(doc, "ok", status == CLI_OK);
        if (status == CLI_OK)
            cJSON_AddNullToObject(doc, "error");
        else
            cJSON_AddStringToObject(doc, "error", err);
        if (st == SANDBOX_OK || st == SANDBOX_ERROR)
            cJSON_AddNullToObject(doc, "limit");
        else
            cJSON_AddStringToObject(doc, "limit", sandbox_status_name(st));
        cJSON_AddItemToObject(doc, "logs", output_lines(sb));
        cJSON_AddItemToObject(doc, "calls", skill_journal_calls_json(&ctx.journal));
        cJSON_AddNumberToObject(doc, "instructions", (double)use.instructions);
        cJSON_AddNumberToObject(doc, "memory_peak", (double)use.memory_peak);
        if (cli_print_json(doc) != CLI_OK) status = CLI_FAIL;
    } else if (status != CLI_OK) {
        fprintf(stderr, "aloft lua: %s\n", err);
    }
    skills_release(&ctx);
    sandbox_free(sb);
    if (world.drone) mission_world_close(&world, true);
    registry_free(reg);
    free(code);
    return status;
}
