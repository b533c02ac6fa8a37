/* aloft run: fly one mission (SPEC §2).
 *
 * Today this runs a given plan (--plan) in the simulator (--scene). The
 * places where the other ways of running a mission plug in are marked
 * "extension:" below: --task (the mission controller with an LLM), --drone
 * tello, --db (the store), --replay and --detector. */
#include "cmd/cli.h"
#include "mission/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft run [--scene S] (--plan FILE|- | --task TEXT) [options]\n"
    "\n"
    "Fly one mission. With --plan, run a MiniSpec plan as written; progress\n"
    "(every skill call with the simulated time) goes to stderr.\n"
    "\n"
    "  --scene FILE          the simulated world (SPEC scene file)\n"
    "  --plan FILE|-         the MiniSpec plan to fly\n"
    "  --time-scale X        simulated seconds per real second; 0 = instant\n"
    "                        (default 1, or 0 with --json)\n"
    "  --seed N              seed for the simulator's noise (default 1)\n"
    "  --pictures DIR        where take_picture writes (default $TMPDIR or /tmp)\n"
    "  --quiet               no progress on stderr\n"
    "  --skills DIR          also load the skill files of DIR (repeatable)\n"
    "  --max-instructions N  instruction budget (default 10000000)\n"
    "  --max-memory BYTES    memory cap, k/M/G suffixes allowed (default 16M)\n"
    "  --timeout-ms N        wall-clock limit (default 300000)\n"
    "  --json                print the mission report as one JSON document\n"
    "\n"
    "Ctrl-C stops the mission at once (the drone hovers); the report is still\n"
    "printed. Exit status: 0 success, 1 the plan or mission failed, 2 usage.\n";

enum {
    OPT_PLAN = OPT_FIRST_FREE,
    OPT_TASK,
    OPT_TIME_SCALE,
    OPT_SEED,
    OPT_PICTURES,
    OPT_QUIET,
    OPT_DRONE,
};

typedef struct run_args {
    cli_common c;
    const char *plan_path;
    const char *task;
    const char *drone;
    const char *pictures;
    double time_scale;
    bool time_scale_set;
    unsigned long long seed;
    bool quiet;
} run_args;

static int parse_args(run_args *a, int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_LIMIT_OPTIONS,
        {"scene", required_argument, 0, OPT_SCENE},
        {"plan", required_argument, 0, OPT_PLAN},
        {"task", required_argument, 0, OPT_TASK},
        {"time-scale", required_argument, 0, OPT_TIME_SCALE},
        {"seed", required_argument, 0, OPT_SEED},
        {"pictures", required_argument, 0, OPT_PICTURES},
        {"quiet", no_argument, 0, OPT_QUIET},
        {"drone", required_argument, 0, OPT_DRONE},
        /* extension: --db, --replay, --detector, --llm-url, --model, ... */
        {0, 0, 0, 0},
    };
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (opt == 'h') opt = OPT_HELP;
        int r = cli_common_option(&a->c, opt, optarg);
        if (r < 0) return CLI_USAGE;
        if (r == 1) continue;
        switch (opt) {
        case OPT_PLAN: a->plan_path = optarg; break;
        case OPT_TASK: a->task = optarg; break;
        case OPT_DRONE: a->drone = optarg; break;
        case OPT_PICTURES: a->pictures = optarg; break;
        case OPT_QUIET: a->quiet = true; break;
        case OPT_TIME_SCALE: {
            char *end;
            a->time_scale = strtod(optarg, &end);
            if (end == optarg || *end || !(a->time_scale >= 0) || a->time_scale > 1e6)
                return cli_usage_error(a->c.cmd, "--time-scale: '%s' is not a number >= 0", optarg);
            a->time_scale_set = true;
            break;
        }
        case OPT_SEED:
            if (cli_parse_u64(optarg, false, &a->seed))
                return cli_usage_error(a->c.cmd, "--seed: '%s' is not a number", optarg);
            break;
        default: return cli_usage_error(a->c.cmd, "unknown option");
        }
    }
    if (a->c.help) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (optind < argc) return cli_usage_error(a->c.cmd, "unexpected argument '%s'", argv[optind]);
    if (!a->plan_path && !a->task)
        return cli_usage_error(a->c.cmd, "give --plan FILE or --task TEXT");
    if (a->plan_path && a->task)
        return cli_usage_error(a->c.cmd, "give --plan or --task, not both");
    if (!a->time_scale_set) a->time_scale = a->c.json ? 0 : 1;
    return -1; /* go on */
}

static void set_cancel(void *ud, sandbox *sb)
{
    (void)ud;
    cli_cancel_on_signal(sb);
}

int cmd_run(int argc, char **argv)
{
    run_args a = {.c = {.cmd = "run"}, .seed = 1};
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0) return rc;
    /* extension: --task hands the text to the mission controller (LLM). */
    if (a.task) return cli_fail(a.c.cmd, "--task needs the LLM mission controller (not built yet)");
    /* extension: --drone tello[:HOST] opens the Tello driver and wraps it
     * with mission_world_wrap (the scene, if any, gives the limits). */
    if (a.drone && strcmp(a.drone, "sim") != 0)
        return cli_fail(a.c.cmd, "--drone %s: only the simulator is available", a.drone);
    if (!a.c.scene) return cli_usage_error(a.c.cmd, "the simulator needs --scene FILE");

    char err[1024];
    size_t len;
    char *plan = cli_read_input(a.plan_path, CLI_MAX_INPUT, &len, err, sizeof err);
    if (!plan) return cli_fail(a.c.cmd, "%s", err);
    skill_registry *reg = cli_load_registry(&a.c);
    if (!reg) {
        free(plan);
        return CLI_FAIL;
    }
    mission_world world;
    sim_options so = {a.time_scale, a.seed, a.pictures};
    if (mission_world_sim(&world, a.c.scene, &so, err, sizeof err)) {
        registry_free(reg);
        free(plan);
        return cli_fail(a.c.cmd, "%s", err);
    }
    runner_opts ro = {
        .reg = reg,
        .world = &world,
        .plan = plan,
        .plan_len = len,
        .limits = cli_limits(&a.c),
        .progress = a.quiet ? NULL : stderr,
        .on_sandbox = set_cancel,
    };
    cJSON *doc = runner_run(&ro);
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
    if (a.c.json) {
        cli_print_json(doc);
    } else {
        cJSON *logs = cJSON_GetObjectItemCaseSensitive(doc, "logs");
        for (const cJSON *l = logs ? logs->child : NULL; l; l = l->next)
            printf("%s\n", l->valuestring);
        cJSON_Delete(doc);
    }
    mission_world_close(&world, true);
    registry_free(reg);
    free(plan);
    return ok ? CLI_OK : CLI_FAIL;
}
