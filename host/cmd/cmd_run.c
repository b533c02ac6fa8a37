/* aloft run: fly one mission (SPEC §2).
 *
 * Runs a given plan (--plan) or a task planned by the LLM (--task, the
 * mission controller) in the simulator (--scene). The places where the other
 * ways of running a mission plug in are marked "extension:" below: --drone
 * tello, --db (the store), --replay and --detector. */
#include "cmd/cli.h"
#include "mission/controller.h"
#include "mission/runner.h"

#include <signal.h>
#include <stdatomic.h>
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
    "  --task TEXT           what to do, in plain English: the LLM writes the\n"
    "                        plan and the drone starts while it is written\n"
    "  --llm-url URL         OpenAI-compatible base URL (default\n"
    "                        $OPENAI_BASE_URL or https://api.openai.com/v1)\n"
    "  --model NAME          the model (default $ALOFT_MODEL); key: $OPENAI_API_KEY\n"
    "  --no-stream           wait for the whole plan before running it\n"
    "  --max-tries N         plans asked for when they fail the checker (default 3)\n"
    "  --max-replans N       new plans after rp, a failed skill or a refused\n"
    "                        motion (default 3)\n"
    "  --llm-timeout-ms N    limit for one LLM call, retries included (default 120000)\n"
    "  --llm-idle-timeout-ms N  longest silence in a streamed reply (default 30000)\n"
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
    OPT_LLM_URL,
    OPT_MODEL,
    OPT_NO_STREAM,
    OPT_MAX_TRIES,
    OPT_MAX_REPLANS,
    OPT_LLM_TIMEOUT,
    OPT_LLM_IDLE,
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
    /* --task: the mission controller */
    const char *llm_url;
    const char *model;
    bool no_stream;
    unsigned long long max_tries, max_replans, llm_timeout_ms, llm_idle_ms;
} run_args;

static const char *option_name(const struct option *opts, int code)
{
    for (; opts->name; opts++)
        if (opts->val == code) return opts->name;
    return "?";
}

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
        {"llm-url", required_argument, 0, OPT_LLM_URL},
        {"model", required_argument, 0, OPT_MODEL},
        {"no-stream", no_argument, 0, OPT_NO_STREAM},
        {"max-tries", required_argument, 0, OPT_MAX_TRIES},
        {"max-replans", required_argument, 0, OPT_MAX_REPLANS},
        {"llm-timeout-ms", required_argument, 0, OPT_LLM_TIMEOUT},
        {"llm-idle-timeout-ms", required_argument, 0, OPT_LLM_IDLE},
        /* extension: --db, --replay, --detector, ... */
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
        case OPT_LLM_URL: a->llm_url = optarg; break;
        case OPT_MODEL: a->model = optarg; break;
        case OPT_NO_STREAM: a->no_stream = true; break;
        case OPT_MAX_TRIES:
        case OPT_MAX_REPLANS:
        case OPT_LLM_TIMEOUT:
        case OPT_LLM_IDLE: {
            unsigned long long *v = opt == OPT_MAX_TRIES     ? &a->max_tries
                                    : opt == OPT_MAX_REPLANS ? &a->max_replans
                                    : opt == OPT_LLM_TIMEOUT ? &a->llm_timeout_ms
                                                             : &a->llm_idle_ms;
            unsigned long long lo = opt == OPT_MAX_REPLANS ? 0 : 1;
            if (cli_parse_u64(optarg, false, v) || *v < lo || *v > 100000000)
                return cli_usage_error(a->c.cmd, "--%s: '%s' is not a number >= %llu",
                                       option_name(opts, opt), optarg, lo);
            break;
        }
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
    if (a->task) {
        if (!a->task[0]) return cli_usage_error(a->c.cmd, "--task: the task is empty");
        const char *env = getenv("ALOFT_MODEL");
        if (!a->model && !(env && *env))
            return cli_usage_error(a->c.cmd, "--task needs a model: give --model NAME or set "
                                             "ALOFT_MODEL");
    }
    return -1; /* go on */
}

static void set_cancel(void *ud, sandbox *sb)
{
    (void)ud;
    cli_cancel_on_signal(sb);
}

/* Ctrl-C during a --task mission: stop the LLM request and the sandbox. */
static atomic_bool task_cancel;
static sandbox *volatile task_sandbox;

static void on_task_signal(int sig)
{
    (void)sig;
    atomic_store(&task_cancel, true);
    sandbox *sb = task_sandbox;
    if (sb) sandbox_cancel(sb); /* an atomic store: safe in a handler */
}

static void task_signals(bool on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? on_task_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void set_task_sandbox(void *ud, sandbox *sb)
{
    (void)ud;
    task_sandbox = sb;
    if (sb && atomic_load(&task_cancel)) sandbox_cancel(sb);
}

/* The LLM settings of a --task run, from the environment and the flags. */
static void llm_settings(const run_args *a, llm_config *cfg)
{
    llm_config_defaults(cfg);
    if (a->llm_url) snprintf(cfg->base_url, sizeof cfg->base_url, "%s", a->llm_url);
    if (a->model) snprintf(cfg->model, sizeof cfg->model, "%s", a->model);
    if (a->llm_timeout_ms) cfg->total_timeout_ms = (long)a->llm_timeout_ms;
    if (a->llm_idle_ms) cfg->idle_timeout_ms = (long)a->llm_idle_ms;
}

/* Flies --task with the mission controller. */
static cJSON *run_task(const run_args *a, const skill_registry *reg, mission_world *world,
                       char *err, size_t errlen)
{
    prompt_set *ps = prompt_load(NULL, err, errlen);
    if (!ps) return NULL;
    llm_config cfg;
    llm_settings(a, &cfg);
    mission_opts mo;
    mission_opts_defaults(&mo);
    mo.run.reg = reg;
    mo.run.world = world;
    mo.run.limits = cli_limits(&a->c);
    mo.run.progress = a->quiet ? NULL : stderr;
    mo.run.on_sandbox = set_task_sandbox;
    mo.task = a->task;
    mo.prompts = ps;
    mo.llm = mission_llm_default(&cfg);
    mo.stream = !a->no_stream;
    if (a->max_tries) mo.max_tries = (int)a->max_tries;
    if (a->max_replans != ~0ull) mo.max_replans = (int)a->max_replans;
    mo.cancel = &task_cancel;
    atomic_store(&task_cancel, false);
    task_signals(true);
    cJSON *doc = mission_run(&mo);
    task_signals(false);
    task_sandbox = NULL;
    prompt_free(ps);
    if (!doc) snprintf(err, errlen, "out of memory");
    return doc;
}

int cmd_run(int argc, char **argv)
{
    run_args a = {.c = {.cmd = "run"}, .seed = 1, .max_replans = ~0ull};
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0) return rc;
    /* extension: --drone tello[:HOST] opens the Tello driver and wraps it
     * with mission_world_wrap (the scene, if any, gives the limits). */
    if (a.drone && strcmp(a.drone, "sim") != 0)
        return cli_fail(a.c.cmd, "--drone %s: only the simulator is available", a.drone);
    if (!a.c.scene) return cli_usage_error(a.c.cmd, "the simulator needs --scene FILE");

    char err[1024];
    size_t len = 0;
    char *plan = NULL;
    if (a.plan_path) {
        plan = cli_read_input(a.plan_path, CLI_MAX_INPUT, &len, err, sizeof err);
        if (!plan) return cli_fail(a.c.cmd, "%s", err);
    }
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
    cJSON *doc;
    if (a.task) {
        doc = run_task(&a, reg, &world, err, sizeof err);
        if (!doc) {
            mission_world_close(&world, true);
            registry_free(reg);
            return cli_fail(a.c.cmd, "%s", err);
        }
    } else {
        runner_opts ro = {
            .reg = reg,
            .world = &world,
            .plan = plan,
            .plan_len = len,
            .limits = cli_limits(&a.c),
            .progress = a.quiet ? NULL : stderr,
            .on_sandbox = set_cancel,
        };
        doc = runner_run(&ro);
    }
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
    if (a.c.json) {
        cli_print_json(doc);
    } else {
        cJSON *logs = cJSON_GetObjectItemCaseSensitive(doc, "logs");
        for (const cJSON *l = logs ? logs->child : NULL; l; l = l->next)
            printf("%s\n", l->valuestring);
        if (!ok && a.task && a.quiet) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
            if (cJSON_IsString(e)) fprintf(stderr, "aloft run: %s\n", e->valuestring);
        }
        cJSON_Delete(doc);
    }
    mission_world_close(&world, true);
    registry_free(reg);
    free(plan);
    return ok ? CLI_OK : CLI_FAIL;
}
