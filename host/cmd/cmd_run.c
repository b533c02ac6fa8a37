/* aloft run: fly one mission (SPEC §2).
 *
 * Runs a given plan (--plan) or a task planned by the LLM (--task, the
 * mission controller) in the simulator (--scene) or on a Tello (--drone
 * tello, the scene optional: it only gives limits), recorded in the mission
 * store (--db), or flies a recorded simulator mission again (--replay).
 * --detector and --source give the mission real eyes: the vision pipeline
 * instead of the simulator's camera. */
#include "cmd/cli.h"
#include "cmd/run_probe.h"
#include "drone/tello.h"
#include "mission/controller.h"
#include "mission/record.h"
#include "mission/watchdog.h"
#include "mission/runner.h"
#include "verify/gate.h"
#include "vision/options.h"
#include "vision/pipeline.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "Usage: aloft run [--drone sim|tello[:HOST]] [--scene S] (--plan FILE|- | --task TEXT)\n"
    "                 [options]\n"
    "\n"
    "Fly one mission. With --plan, run a MiniSpec plan as written; progress\n"
    "(every skill call with the simulated time) goes to stderr.\n"
    "\n"
    "  --scene FILE          the simulated world (SPEC scene file); with a Tello,\n"
    "                        optional: its limits (else the default limits)\n"
    "  --drone sim|tello[:HOST]  fly the simulator (default) or a Tello (default\n"
    "                        address 192.168.10.1): connect, battery check,\n"
    "                        takeoff, the plan, then land\n"
    "  --tello-port P        the Tello's command port (default 8889)\n"
    "  --tello-state-port P  local port of its state string (default 8890)\n"
    "  --tello-video-port P  local port of its video stream (default 11111)\n"
    "  --tello-timeout-ms N  reply timeout of one command (default 7000)\n"
    "  --no-video            no `streamon` (no camera for --detector)\n"
    "  --no-land             stay in the air when the mission ends\n" VISION_RUN_HELP
    "  --plan FILE|-         the MiniSpec plan to fly\n"
    "  --task TEXT           what to do, in plain English: the LLM writes the\n"
    "                        plan and the drone starts while it is written\n" CLI_LLM_HELP
    "  --llm-idle-timeout-ms N  longest silence in a streamed reply (default 30000)\n"
    "  --time-scale X        simulated seconds per real second; 0 = instant\n"
    "                        (default 1, or 0 with --json)\n"
    "  --seed N              seed for the simulator's noise (default 1)\n"
    "  --pictures DIR        where take_picture makes the mission's own pictures\n"
    "                        directory, aloft-pictures-XXXXXX (default $TMPDIR\n"
    "                        or /tmp)\n"
    "  --max-pictures N      pictures one mission may take (default 100); past\n"
    "                        it take_picture returns False\n"
    "  --max-picture-bytes BYTES  bytes of pictures one mission may write, k/M/G\n"
    "                        suffixes allowed (default 64M); past it likewise\n"
    "  --quiet               no progress on stderr\n"
    "  --verify N            first fly the plan in N worlds sampled from the scene\n"
    "                        (as `aloft check --verify`, seed --seed) and fly it for\n"
    "                        real only if every world passed; else exit 1 without\n"
    "                        taking off. With --task each plan is verified before\n"
    "                        it runs (a failing one counts as a failed try), so\n"
    "                        --verify turns stream execution off (as --no-stream);\n"
    "                        the drone is up before the first plan arrives.\n"
    "                        With --drone tello it needs --scene\n"
    "  --skills DIR          also load the skill files of DIR (repeatable)\n"
    "  --max-instructions N  instruction budget (default 10000000)\n"
    "  --max-memory BYTES    memory cap, k/M/G suffixes allowed (default 16M)\n"
    "  --timeout-ms N        wall-clock limit (default 300000)\n"
    "  --json                print the mission report as one JSON document\n"
    "  --db FILE             the mission store every run is recorded in (default\n"
    "                        $ALOFT_DB, else $XDG_DATA_HOME/aloft/aloft.db)\n"
    "  --replay ID           fly recorded mission ID again in the simulator with\n"
    "                        its scene, seed and plan or task, answering LLM\n"
    "                        requests with the recorded replies; says whether\n"
    "                        the skill calls match (exit 1 if not)\n"
    "\n"
    "With --drone tello and --detector yolo|hog, the camera is the Tello's video\n"
    "stream unless --source says otherwise; with no --detector a Tello mission\n"
    "has no camera (vision skills fail).\n"
    "\n"
    "Ctrl-C stops the mission at once (the drone hovers, a Tello then lands\n"
    "unless --no-land); the report is still printed.\n"
    "Exit status: 0 success, 1 the plan or mission failed, 2 usage.\n";

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
    OPT_DB,
    OPT_PROMPTS,
    OPT_REPLAY,
    OPT_TELLO, /* every Tello option: see tello_config_option */
    OPT_VERIFY,
    OPT_MAX_PICTURES,
    OPT_MAX_PICTURE_BYTES,
};

typedef struct run_args {
    cli_common c;
    const char *plan_path;
    const char *task;
    const char *drone;
    const char *pictures;
    unsigned long long max_pictures, max_picture_bytes; /* 0: the defaults */
    double time_scale;
    bool time_scale_set;
    unsigned long long seed;
    bool seed_set;
    bool quiet;
    const char *db;      /* --db, or NULL for the default store */
    const char *prompts; /* --prompts DIR, or NULL: the built-in templates */
    long long replay;    /* --replay ID, or 0 */
    /* --task: the mission controller */
    const char *llm_url;
    const char *model;
    bool no_stream;
    unsigned long long max_tries, max_replans, llm_timeout_ms, llm_idle_ms;
    /* --drone tello: the driver's settings */
    tello_config tello;
    bool on_tello;      /* --drone tello[:HOST] */
    bool tello_options; /* a Tello option other than --drone was given */
    /* the mission's eyes: --detector, --source, ... */
    vision_options vision;
    long verify;   /* --verify N worlds, or 0 */
    bool reported; /* the report went out (print_report) */
} run_args;

static const char *option_name(const struct option *opts, int code)
{
    for (; opts->name; opts++)
        if (opts->val == code) return opts->name;
    return "?";
}

/* The --drone, Tello and vision options together; -1 when they fit, else
 * the exit status of the usage error. */
static int check_drone_and_eyes(run_args *a)
{
    const char *cmd = a->c.cmd;
    const vision_options *vo = &a->vision;
    char err[512];
    bool camera = vo->det.kind != VISION_DETECTOR_SIM; /* yolo or hog */
    if (vision_options_check(vo, err, sizeof err)) return cli_usage_error(cmd, "%s", err);
    if (a->tello_options && !a->on_tello)
        return cli_usage_error(cmd, "--tello-*, --no-video and --no-land need --drone tello");
    if (a->on_tello) {
        if (a->replay)
            return cli_usage_error(cmd, "--replay flies in the simulator: give no --drone tello");
        if (vo->detector_given && !camera)
            return cli_usage_error(cmd, "--detector sim sees only the simulated world: with "
                                        "--drone tello give --detector yolo or hog");
        if (camera && !vo->source && !a->tello.video)
            return cli_usage_error(cmd,
                                   "--no-video leaves --detector %s without a camera: "
                                   "give --source",
                                   vo->det.kind == VISION_DETECTOR_YOLO ? "yolo" : "hog");
    } else {
        if (!a->replay && !a->c.scene)
            return cli_usage_error(cmd, "the simulator needs --scene FILE");
        if (camera && !vo->source)
            return cli_usage_error(cmd,
                                   "--detector %s needs a camera in the simulator: give "
                                   "--source FILE|webcam:N|udp://HOST:PORT",
                                   vo->det.kind == VISION_DETECTOR_YOLO ? "yolo" : "hog");
    }
    /* Missing files are found now, not after the drone took off. */
    const char *files[] = {vo->det.model, vo->det.weights, vo->det.names};
    for (int i = 0; i < 3; i++)
        if (files[i] && access(files[i], R_OK) != 0)
            return cli_fail(cmd, "%s: cannot read it", files[i]);
    return -1;
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
        {"db", required_argument, 0, OPT_DB},
        {"prompts", required_argument, 0, OPT_PROMPTS},
        {"replay", required_argument, 0, OPT_REPLAY},
        {"verify", required_argument, 0, OPT_VERIFY},
        {"max-pictures", required_argument, 0, OPT_MAX_PICTURES},
        {"max-picture-bytes", required_argument, 0, OPT_MAX_PICTURE_BYTES},
        TELLO_LONG_OPTIONS(OPT_TELLO),
        VISION_RUN_OPTIONS,
        {0, 0, 0, 0},
    };
    int opt, idx = -1;
    char err[512];
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
        if (opt == 'h') opt = OPT_HELP;
        int r = cli_common_option(&a->c, opt, optarg);
        if (r < 0) return CLI_USAGE;
        if (r == 1) continue;
        r = vision_options_parse(&a->vision, opt, optarg, err, sizeof err);
        if (r < 0) return cli_usage_error(a->c.cmd, "%s", err);
        if (r == 1) continue;
        switch (opt) {
        case OPT_PLAN: a->plan_path = optarg; break;
        case OPT_TASK: a->task = optarg; break;
        case OPT_DRONE:
            a->drone = optarg;
            r = tello_config_option(&a->tello, "drone", optarg, err, sizeof err);
            if (r < 0) return cli_usage_error(a->c.cmd, "%s", err);
            if (r == 0 && strcmp(optarg, "sim") != 0)
                return cli_usage_error(a->c.cmd, "--drone %s: expected sim, tello or tello:HOST",
                                       optarg);
            a->on_tello = r == 1;
            break;
        case OPT_TELLO:
            /* idx is set for long options, the only way to reach here */
            if (tello_config_option(&a->tello, opts[idx].name, optarg, err, sizeof err) != 1)
                return cli_usage_error(a->c.cmd, "%s", err);
            a->tello_options = true;
            break;
        case OPT_PICTURES: a->pictures = optarg; break;
        case OPT_MAX_PICTURES:
            if (cli_parse_u64(optarg, false, &a->max_pictures) || a->max_pictures == 0 ||
                a->max_pictures > 100000)
                return cli_usage_error(a->c.cmd,
                                       "--max-pictures: '%s' is not a number in 1..100000", optarg);
            break;
        case OPT_MAX_PICTURE_BYTES:
            if (cli_parse_u64(optarg, true, &a->max_picture_bytes) || a->max_picture_bytes == 0)
                return cli_usage_error(a->c.cmd, "--max-picture-bytes: '%s' is not a size > 0",
                                       optarg);
            break;
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
            a->seed_set = true;
            break;
        case OPT_DB: a->db = optarg; break;
        case OPT_PROMPTS: a->prompts = optarg; break;
        case OPT_REPLAY: {
            unsigned long long id;
            if (cli_parse_u64(optarg, false, &id) || id == 0 || id > LLONG_MAX)
                return cli_usage_error(a->c.cmd, "--replay: '%s' is not a mission id", optarg);
            a->replay = (long long)id;
            break;
        }
        case OPT_VERIFY: {
            unsigned long long n;
            if (cli_parse_u64(optarg, false, &n) || n == 0 || n > VERIFY_MAX_WORLDS)
                return cli_usage_error(a->c.cmd,
                                       "--verify: '%s' is not a number of worlds in 1..%d", optarg,
                                       VERIFY_MAX_WORLDS);
            a->verify = (long)n;
            break;
        }
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
    if (a->replay && (a->plan_path || a->task || a->c.scene))
        return cli_usage_error(a->c.cmd, "--replay flies the recorded plan and scene: "
                                         "give no --plan, --task or --scene");
    if (!a->plan_path && !a->task && !a->replay)
        return cli_usage_error(a->c.cmd, "give --plan FILE or --task TEXT");
    int r = check_drone_and_eyes(a);
    if (r >= 0) return r;
    if (a->prompts && (r = cli_check_prompts(a->c.cmd, a->prompts)) >= 0) return r;
    if (a->verify && a->replay)
        return cli_usage_error(a->c.cmd, "--replay flies a recorded mission: give no --verify");
    if (a->verify && !a->c.scene)
        return cli_usage_error(a->c.cmd, "--verify%s needs --scene FILE to sample worlds from",
                               a->on_tello ? " on a Tello" : "");
    if (a->verify) a->no_stream = true; /* a plan is verified whole */
    if (a->plan_path && a->task)
        return cli_usage_error(a->c.cmd, "give --plan or --task, not both");
    if (!a->time_scale_set) a->time_scale = a->c.json ? 0 : 1;
    if (a->task) {
        if (!a->task[0]) return cli_usage_error(a->c.cmd, "--task: the task is empty");
        if (!cli_model(a->model))
            return cli_usage_error(a->c.cmd, "--task needs a model: give --model NAME or set "
                                             "ALOFT_MODEL");
    }
    return -1; /* go on */
}

/* The plan's sandbox takes Ctrl-C from here (cli_cancel_begin in fly). */
static void set_cancel(void *ud, sandbox *sb)
{
    (void)ud;
    cli_cancel_sandbox(sb);
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

/* --verify: the gate every plan passes before it flies (verify/gate.h). */
static void gate_init(const run_args *a, const skill_registry *reg, const scene *sc, verify_gate *g)
{
    memset(g, 0, sizeof *g);
    g->opts = (verify_opts){.reg = reg,
                            .scene = sc,
                            .worlds = (int)a->verify,
                            .seed = a->seed,
                            .limits = cli_limits(&a->c)};
    g->progress = a->quiet ? NULL : stderr;
    g->cancel_to = cli_cancel_sandbox;
}

/* Flies --task with the mission controller, recorded by REC; the LLM
 * replies come from REPLAY when it is not NULL; --verify samples its worlds
 * from SC (the scene file: a Tello world's scene starts where it took off). */
static cJSON *run_task(const run_args *a, const skill_registry *reg, mission_world *world,
                       const scene *sc, mission_record *rec, store_replay *replay,
                       runner_outcome *out, char *err, size_t errlen)
{
    prompt_set *ps = prompt_load(a->prompts, err, errlen);
    if (!ps) return NULL;
    llm_config cfg;
    llm_settings(a, &cfg);
    mission_opts mo;
    mission_opts_defaults(&mo);
    mo.run.reg = reg;
    mo.run.world = world;
    mo.run.limits = cli_limits(&a->c);
    mo.run.progress = a->quiet ? NULL : stderr;
    mo.run.on_sandbox = set_cancel;
    mo.task = a->task;
    mo.prompts = ps;
    mo.llm = replay ? mission_record_replay_llm(replay) : mission_llm_default(&cfg);
    mo.run.record = rec;
    mo.run.t0_ms = mission_record_t0_ms(rec);
    mo.obs = mission_record_observer(rec, cfg.model);
    mo.stream = !a->no_stream;
    if (a->max_tries) mo.max_tries = (int)a->max_tries;
    if (a->max_replans != ~0ull) mo.max_replans = (int)a->max_replans;
    mo.cancel = cli_cancel_flag();
    mo.outcome = out;
    verify_gate g;
    gate_init(a, reg, sc, &g);
    if (a->verify) {
        g.from = world;
        mo.vet = verify_gate_check, mo.vet_ud = &g;
        mo.run.on_sandbox = verify_gate_mission_sandbox, mo.run.on_sandbox_ud = &g;
    }
    cJSON *doc = mission_run(&mo);
    if (doc && g.reports)
        cJSON_AddItemToObject(doc, "verify", g.reports);
    else
        cJSON_Delete(g.reports);
    prompt_free(ps);
    if (!doc) snprintf(err, errlen, "out of memory");
    return doc;
}

/* ---- recording and replay ------------------------------------------------ */

/* The run options recorded with the mission, so that --replay flies it
 * again under the same limits, skills and controller settings. */
static char *params_json(const run_args *a)
{
    cJSON *p = cJSON_CreateObject();
    sandbox_limits l = cli_limits(&a->c);
    cJSON_AddNumberToObject(p, "time_scale", a->time_scale);
    if (a->plan_path) /* for `aloft log`, which names what a --plan mission flew */
        cJSON_AddStringToObject(p, "plan_file", strcmp(a->plan_path, "-") ? a->plan_path : "stdin");
    if (a->task) {
        cJSON_AddBoolToObject(p, "stream", !a->no_stream);
        if (a->max_tries) cJSON_AddNumberToObject(p, "max_tries", (double)a->max_tries);
        if (a->max_replans != ~0ull)
            cJSON_AddNumberToObject(p, "max_replans", (double)a->max_replans);
    }
    cJSON_AddNumberToObject(p, "max_instructions", (double)l.max_instructions);
    cJSON_AddNumberToObject(p, "max_memory", (double)l.max_memory);
    cJSON_AddNumberToObject(p, "timeout_ms", (double)l.timeout_ms);
    if (a->max_pictures) cJSON_AddNumberToObject(p, "max_pictures", (double)a->max_pictures);
    if (a->max_picture_bytes)
        cJSON_AddNumberToObject(p, "max_picture_bytes", (double)a->max_picture_bytes);
    cJSON *dirs = cJSON_AddArrayToObject(p, "skills");
    for (int i = 0; i < a->c.n_skill_dirs; i++) {
        char *abs = realpath(a->c.skill_dirs[i], NULL);
        cJSON_AddItemToArray(dirs, cJSON_CreateString(abs ? abs : a->c.skill_dirs[i]));
        free(abs);
    }
    char *text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    return text;
}

/* Takes the recorded limits, skill directories and controller settings the
 * command line did not give. Returns the parsed params, which hold the
 * directory names: keep them until the run is over. */
static cJSON *apply_params(run_args *a, const char *text)
{
    cJSON *p = text ? cJSON_Parse(text) : NULL;
    const cJSON *v;
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "stream"))) a->no_stream = true;
    if (!a->max_tries && cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "max_tries")))
        a->max_tries = (unsigned long long)v->valuedouble;
    if (a->max_replans == ~0ull &&
        cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "max_replans")))
        a->max_replans = (unsigned long long)v->valuedouble;
    if (!a->c.limits.max_instructions &&
        cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "max_instructions")))
        a->c.limits.max_instructions = (uint64_t)v->valuedouble;
    if (!a->c.limits.max_memory &&
        cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "max_memory")))
        a->c.limits.max_memory = (size_t)v->valuedouble;
    if (!a->c.limits.timeout_ms &&
        cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "timeout_ms")))
        a->c.limits.timeout_ms = (uint64_t)v->valuedouble;
    /* The store is read, not trusted: out-of-range caps keep the defaults. */
    v = cJSON_GetObjectItemCaseSensitive(p, "max_pictures");
    if (!a->max_pictures && cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= 100000)
        a->max_pictures = (unsigned long long)v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(p, "max_picture_bytes");
    if (!a->max_picture_bytes && cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e18)
        a->max_picture_bytes = (unsigned long long)v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(p, "skills");
    for (const cJSON *d = a->c.n_skill_dirs  ? NULL
                          : cJSON_IsArray(v) ? v->child
                                             : NULL;
         d && a->c.n_skill_dirs < CLI_MAX_SKILL_DIRS; d = d->next)
        if (cJSON_IsString(d)) a->c.skill_dirs[a->c.n_skill_dirs++] = d->valuestring;
    return p;
}

/* What one run flies: a plan, or the task of A (the mission controller). */
typedef struct flight {
    const char *plan; /* NULL for a task */
    size_t plan_len;
    const scene *scene;
    const char *scene_json; /* recorded with the mission (valid JSON), or NULL */
    int64_t replay_of;
    store_replay *replies; /* replay: the recorded LLM replies, or NULL */
} flight;

/* The model a --task run asks (--model, else $ALOFT_MODEL), or NULL. */
static const char *model_name(const run_args *a)
{
    return a->task ? cli_model(a->model) : NULL;
}

/* Ctrl-C before the plan runs (connect, takeoff, opening the Tello's video
 * stream): the driver's calls give up, and the world lands when closed. */
static bool launch_aborted(void *ud)
{
    (void)ud;
    return atomic_load(cli_cancel_flag());
}

/* Opens the world A flies in: the simulator in F's scene (it takes off at
 * once), or the Tello behind the limits of --scene (or the default ones),
 * connected (battery check) and launched; then the eyes, if a detector was
 * asked for. On failure W holds what was opened: close it. */
static int open_world(const run_args *a, const flight *f, mission_world *w, char *err,
                      size_t errlen)
{
    if (a->on_tello) {
        drone *drv = tello_new(&a->tello, err, errlen);
        if (!drv || mission_world_wrap(w, drv, a->c.scene, err, errlen)) return -1;
        if (!a->quiet)
            fprintf(stderr, "connecting to the Tello at %s:%d\n", a->tello.host, a->tello.port);
        w->drone->abort = launch_aborted;
        int rc = mission_world_launch(w, err, errlen);
        w->drone->abort = NULL;
        if (rc) return -1;
        if (atomic_load(cli_cancel_flag())) {
            snprintf(err, errlen, "cancelled before the plan started");
            return -1;
        }
    } else {
        sim_options so = {.time_scale = a->time_scale,
                          .seed = a->seed,
                          .picture_dir = a->pictures,
                          .max_pictures = (int)a->max_pictures,
                          .max_picture_bytes = a->max_picture_bytes};
        if (mission_world_sim_scene(w, f->scene, &so, err, errlen)) return -1;
    }
    vision_options vo = a->vision;
    if (vo.det.kind == VISION_DETECTOR_SIM && a->on_tello) return 0; /* no camera */
    if (vo.det.kind == VISION_DETECTOR_SIM && !vo.source) return 0;  /* the sim's camera */
    char src[32];
    /* The Tello streams since connect sent `streamon`. */
    if (!vo.source) vo.source = tello_video_source(&a->tello, src, sizeof src);
    if (mission_world_eyes(w, &vo, err, errlen)) return -1;
    if (!a->quiet) fprintf(stderr, "vision: %s\n", vision_pipeline_describe(w->eyes));
    if (a->on_tello && atomic_load(cli_cancel_flag())) {
        snprintf(err, errlen, "cancelled before the plan started");
        return -1;
    }
    return 0;
}

/* Flies F in the simulator or on the Tello, recorded as a new mission (SPEC §12: every run
 * is recorded; a store that cannot be opened stops the run before it
 * flies). The report, with "mission_id", goes to *DOC (NULL if the run
 * never started). Returns the exit status. */
/* Begins recording F as a new mission (its id in *ID), reading poses from
 * WORLD. NULL with a message. */
static mission_record *record_open(const run_args *a, const flight *f, mission_world *world,
                                   int64_t *id, char *err, size_t errlen)
{
    char *params = params_json(a);
    char drone_name[300];
    snprintf(drone_name, sizeof drone_name, "tello:%s", a->tello.host);
    store_mission_info info = {.task = a->task,
                               .drone = a->on_tello ? drone_name : "sim",
                               .model = model_name(a),
                               .scene_json = f->scene_json,
                               .params_json = params,
                               .seed = (int64_t)a->seed,
                               .replay_of = f->replay_of};
    mission_record *rec = mission_record_open(a->db, &info, world, err, errlen);
    free(params);
    if (!rec) return NULL;
    *id = store_mission_id(mission_record_mission(rec));
    if (!a->quiet)
        fprintf(stderr, "mission %lld (recorded in %s)\n", (long long)*id,
                store_path(mission_record_store(rec)));
    return rec;
}

/* Lands W (when LAND) before the mission's outcome is recorded: a landing
 * that fails or is never acknowledged makes the mission fail (SPEC §7).
 * Appends the reason to ERR (after what is there) and returns -1 then. */
static int land_or_fail(mission_world *w, bool land, char *err, size_t errlen)
{
    char why[600];
    if (!land || mission_world_land(w, why, sizeof why) == 0) return 0;
    size_t n = strlen(err);
    snprintf(err + n, errlen - n, "%s%s", n ? "; " : "", why);
    return -1;
}

/* Marks DOC failed with ERR: the landing failed after the plan ran. */
static void report_landing_failed(const run_args *a, cJSON *doc, const char *err)
{
    runner_report_set(doc, "ok", cJSON_CreateFalse());
    runner_report_set(doc, "error", cJSON_CreateString(err));
    fprintf(stderr, "aloft %s: %s\n", a->c.cmd, err);
}

/* What the watchdog needs to end a hung mission (cli_cancel_on_hang). */
typedef struct run_hang {
    const run_args *a;
    mission_world *world;
    mission_record *rec;
    int64_t id;
} run_hang;

/* On the watchdog's thread, the plan's thread being stuck: land, record,
 * report; the process then exits. */
static void on_hang(void *ud, const char *msg)
{
    run_hang *h = ud;
    char why[1024];
    watchdog_end_mission(h->world, h->rec, msg, why, sizeof why);
    cJSON *doc = runner_report_new(NULL, 0);
    runner_report_set(doc, "error", cJSON_CreateString(why));
    runner_report_pose(doc, h->world);
    cJSON_AddNumberToObject(doc, "mission_id", (double)h->id);
    if (h->a->c.json) {
        cli_print_json(doc);
    } else {
        fprintf(stderr, "aloft run: %s\n", why);
        cJSON_Delete(doc);
    }
}

static int fly_recorded(const run_args *a, const flight *f, cJSON **doc, int64_t *id)
{
    char err[1024];
    *doc = NULL;
    skill_registry *reg = cli_load_registry(&a->c);
    if (!reg) return CLI_FAIL;
    mission_world world;
    memset(&world, 0, sizeof world);
    mission_record *rec = record_open(a, f, &world, id, err, sizeof err);
    if (!rec) {
        registry_free(reg);
        return cli_fail(a->c.cmd, "cannot record the mission: %s", err);
    }
    bool land = a->on_tello ? a->tello.land_at_end : true;
    int opened = open_world(a, f, &world, err, sizeof err);
    world.cancel = cli_cancel_flag(); /* a landing after Ctrl-C hurries */
    if (opened != 0) {
        bool cancelled = a->on_tello && atomic_load(cli_cancel_flag());
        if (land_or_fail(&world, land, err, sizeof err)) cancelled = false;
        mission_record_close(rec, cancelled ? STORE_CANCELLED : STORE_FAILED, err, NULL, NULL, 0);
        mission_world_close(&world, land);
        registry_free(reg);
        return cli_fail(a->c.cmd, "%s", err);
    }
    run_hang hang = {a, &world, rec, *id};
    cli_cancel_on_hang(on_hang, &hang);
    runner_outcome out;
    memset(&out, 0, sizeof out);
    if (f->plan) {
        /* probe asks the configured LLM, as in a --task mission */
        run_probe rp = {.prompts_dir = a->prompts, .world = &world, .cancel = cli_cancel_flag()};
        llm_settings(a, &rp.cfg);
        rp.obs = mission_record_observer(rec, rp.cfg.model);
        runner_opts ro = {
            .reg = reg,
            .world = &world,
            .plan = f->plan,
            .plan_len = f->plan_len,
            .limits = cli_limits(&a->c),
            .progress = a->quiet ? NULL : stderr,
            .on_sandbox = set_cancel,
            .outcome = &out,
            .record = rec,
            .probe = run_probe_ask,
            .probe_ud = &rp,
        };
        *doc = runner_run(&ro);
        if (*doc) runner_report_set(*doc, "llm_calls", cJSON_CreateNumber(rp.calls));
    } else {
        *doc = run_task(a, reg, &world, f->scene, rec, f->replies, &out, err, sizeof err);
        if (!*doc) {
            land_or_fail(&world, land, err, sizeof err);
            mission_record_close(rec, STORE_FAILED, err, NULL, NULL, 0);
            mission_world_close(&world, land);
            registry_free(reg);
            return cli_fail(a->c.cmd, "%s", err);
        }
    }
    cJSON_AddNumberToObject(*doc, "mission_id", (double)*id);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(*doc, "error");
    snprintf(err, sizeof err, "%s", cJSON_IsString(e) ? e->valuestring : "");
    bool landed = land_or_fail(&world, land, err, sizeof err) == 0;
    if (!landed) report_landing_failed(a, *doc, err);
    e = cJSON_GetObjectItemCaseSensitive(*doc, "error");
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*doc, "ok"));
    int rc = ok ? CLI_OK : CLI_FAIL;
    /* The report's "ok" decides between ok and not; the outcome tells a
     * cancel from a failure (it stays zero when no plan ran at all). A
     * failed landing is a failure, also after a cancel. */
    store_status status = ok ? STORE_OK : mission_record_status(out.status);
    if ((status == STORE_OK && !ok) || !landed) status = STORE_FAILED;
    if (mission_record_close(rec, status, cJSON_IsString(e) ? e->valuestring : NULL,
                             cJSON_GetObjectItemCaseSensitive(*doc, "result"), err, sizeof err)) {
        rc = cli_fail(a->c.cmd, "mission %lld not recorded to its end: %s", (long long)*id, err);
        /* Exit 1 and "ok": true would contradict each other: a mission the
         * store lost the end of (a full disk) is reported as failed. */
        if (ok) {
            runner_report_set(*doc, "ok", cJSON_CreateFalse());
            runner_report_set(*doc, "error", cJSON_CreateString(cli_last_error()));
        }
    }
    mission_world_close(&world, land);
    registry_free(reg);
    return rc;
}

/* Ctrl-C stops the mission from the first connect to the last landing. */
static int fly(const run_args *a, const flight *f, cJSON **doc, int64_t *id)
{
    cli_cancel_begin();
    int rc = fly_recorded(a, f, doc, id);
    cli_cancel_end();
    return rc;
}

/* Prints the report (all of it with --json, else the plan's log lines).
 * Returns CLI_FAIL when stdout refused the JSON document, else CLI_OK. */
static int print_report(run_args *a, cJSON *doc)
{
    a->reported = true;
    if (a->c.json) return cli_print_json(doc);
    cJSON *logs = cJSON_GetObjectItemCaseSensitive(doc, "logs");
    for (const cJSON *l = logs ? logs->child : NULL; l; l = l->next)
        printf("%s\n", l->valuestring);
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
    if (!ok && a->task && a->quiet) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
        if (cJSON_IsString(e)) fprintf(stderr, "aloft run: %s\n", e->valuestring);
    }
    cJSON_Delete(doc);
    return CLI_OK;
}

/* Loads mission ID's recorded scene into a new scene, or NULL. */
static scene *recorded_scene(const store_replay *r, char *err, size_t errlen)
{
    const char *text = store_replay_scene(r);
    long long id = (long long)store_replay_mission(r);
    if (!text) {
        snprintf(err, errlen, "mission %lld has no recorded scene to fly in", id);
        return NULL;
    }
    scene *sc = malloc(sizeof *sc);
    char msg[512];
    if (!sc) {
        snprintf(err, errlen, "out of memory");
    } else if (scene_parse(sc, text, strlen(text), msg, sizeof msg)) {
        snprintf(err, errlen, "mission %lld: recorded scene: %s", id, msg);
        free(sc);
        sc = NULL;
    }
    return sc;
}

/* True when mission ID was flown in the simulator; else false with why. A
 * real drone's mission is not replayed: its skill calls came from the real
 * world, which the simulator cannot fly again. */
static bool flown_in_sim(store *s, long long id, char *err, size_t errlen)
{
    cJSON *doc = store_mission_json(s, id, err, errlen);
    if (!doc) return false;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "mission");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "drone");
    bool sim = !cJSON_IsString(d) || strcmp(d->valuestring, "sim") == 0;
    if (!sim)
        snprintf(err, errlen,
                 "mission %lld was flown on %s: --replay flies simulator missions only", id,
                 d->valuestring);
    cJSON_Delete(doc);
    return sim;
}

/* --replay ID: the recorded mission flown again as a new mission, then its
 * skill calls compared with the recorded ones. Exit 0 when they match (even
 * when the mission itself failed the same way again), 1 when they do not. */
static int run_replay(run_args *a)
{
    char err[1024];
    store *s = store_open(a->db, STORE_OPEN_EXISTING, err, sizeof err);
    if (!s) return cli_fail(a->c.cmd, "%s", err);
    store_replay *r = store_replay_open(s, a->replay, err, sizeof err);
    scene *sc = NULL;
    int rc = CLI_FAIL;
    if (!r) {
        cli_fail(a->c.cmd, "%s", err);
    } else if (!flown_in_sim(s, a->replay, err, sizeof err)) {
        cli_fail(a->c.cmd, "%s", err);
    } else if (!store_replay_task(r) && !store_replay_plan(r, 0)) {
        cli_fail(a->c.cmd, "mission %lld recorded no plan", a->replay);
    } else if (!(sc = recorded_scene(r, err, sizeof err))) {
        cli_fail(a->c.cmd, "%s", err);
    } else {
        if (!a->seed_set) a->seed = (unsigned long long)store_replay_seed(r);
        cJSON *params = apply_params(a, store_replay_params(r));
        /* A task flies through the controller, with the recorded replies
         * for an LLM; a --plan mission flies its plan. */
        a->task = store_replay_task(r);
        if (a->task && !a->model) a->model = store_replay_model(r);
        const char *plan = a->task ? NULL : store_replay_plan(r, 0);
        flight f = {plan, plan ? strlen(plan) : 0, sc, store_replay_scene(r), a->replay, r};
        cJSON *doc;
        int64_t id = 0;
        fly(a, &f, &doc, &id);
        if (doc) {
            char why[1024] = "";
            /* A picture's path names the file this run wrote: it differs. */
            static const char *const any_result[] = {"take_picture", NULL};
            int same = store_calls_match_except(s, a->replay, id, any_result, why, sizeof why);
            cJSON *rep = cJSON_AddObjectToObject(doc, "replay");
            cJSON_AddNumberToObject(rep, "of", (double)a->replay);
            cJSON_AddBoolToObject(rep, "match", same == 1);
            if (same == 1)
                cJSON_AddNullToObject(rep, "difference");
            else
                cJSON_AddStringToObject(rep, "difference", why);
            if (!a->quiet)
                fprintf(stderr, "replay of mission %lld: %s%s\n", a->replay,
                        same == 1 ? "the skill calls match" : "the skill calls differ: ",
                        same == 1 ? "" : why);
            rc = same == 1 ? CLI_OK : CLI_FAIL;
            if (print_report(a, doc) != CLI_OK) rc = CLI_FAIL;
        }
        cJSON_Delete(params);
    }
    free(sc);
    store_replay_free(r);
    store_close(s);
    return rc;
}

/* --verify with --plan: the plan flies in the sampled worlds before it may
 * take off. Returns -1 to go on (the reports in *PASSED), else the exit
 * status, with the report (no mission flown) in *DOC. A plan the checker
 * refuses goes on, to be refused and recorded as usual. */
static int verify_first(const run_args *a, const flight *f, cJSON **doc, cJSON **passed)
{
    skill_registry *reg = cli_load_registry(&a->c);
    if (!reg) return cli_fail(a->c.cmd, "the built-in skills failed to load");
    ms_result r;
    minispec_compile(reg, f->plan, f->plan_len, NULL, &r);
    bool valid = r.ok;
    ms_result_free(&r);
    verify_gate g;
    gate_init(a, reg, f->scene, &g);
    char why[2048] = "";
    int rc = -1;
    if (valid) {
        cli_cancel_begin();
        rc = verify_gate_check(&g, f->plan, f->plan_len, why, sizeof why) ? CLI_FAIL : -1;
        cli_cancel_end();
    }
    if (rc < 0) {
        *passed = g.reports;
    } else {
        *doc = verify_gate_refusal(&g, f->plan, f->plan_len, why);
        if (!a->c.json) fprintf(stderr, "aloft run: not flown: %s\n", why);
        /* Every run is recorded, also one that never took off. */
        char err[1024];
        int64_t id = 0;
        mission_record *rec = record_open(a, f, NULL, &id, err, sizeof err);
        if (rec) {
            mission_record_plan(rec, f->plan, f->plan_len, true, NULL);
            cJSON_AddNumberToObject(*doc, "mission_id", (double)id);
        }
        if (!rec || mission_record_close(rec, STORE_FAILED, why, NULL, err, sizeof err))
            fprintf(stderr, "aloft run: the refused run was not recorded: %s\n", err);
    }
    registry_free(reg);
    return rc;
}

/* Flies the plan or task of A (after --verify). Returns the exit status;
 * the report is printed unless the run ended before it had one (then the
 * mission's id, if one was recorded, is in *ID). */
static int run_mission(run_args *a, int64_t *id)
{
    char err[1024];
    size_t len = 0, scene_len;
    char *plan = NULL;
    if (a->plan_path) {
        plan = cli_read_input(a->plan_path, CLI_MAX_INPUT, &len, err, sizeof err);
        if (!plan) return cli_fail(a->c.cmd, "%s", err);
    }
    scene *sc = a->c.scene ? malloc(sizeof *sc) : NULL;
    char *scene_text = NULL;
    if (a->c.scene && (!sc || scene_load(sc, a->c.scene, err, sizeof err))) {
        if (!sc) snprintf(err, sizeof err, "out of memory");
        free(sc);
        free(plan);
        return cli_fail(a->c.cmd, "%s", err);
    }
    /* The scene as the file says it, for replay (it parsed, so it is JSON). */
    if (a->c.scene)
        scene_text = cli_read_input(a->c.scene, CLI_MAX_INPUT, &scene_len, err, sizeof err);
    flight f = {plan, len, sc, scene_text, 0, NULL};
    cJSON *doc = NULL;
    cJSON *verified = NULL;
    int rc = a->verify && plan ? verify_first(a, &f, &doc, &verified) : -1;
    if (rc < 0) rc = fly(a, &f, &doc, id);
    if (doc && verified)
        cJSON_AddItemToObject(doc, "verify", verified);
    else
        cJSON_Delete(verified);
    if (doc && print_report(a, doc) != CLI_OK) rc = CLI_FAIL;
    free(scene_text);
    free(sc);
    free(plan);
    return rc;
}

/* True when ARGV asks for --json (looked for on its own: a usage error
 * stops the option parser before it may have seen it). */
static bool wants_json(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0) return true;
    return false;
}

/* run --json prints exactly one document on every path (SPEC §2). A run
 * that ended before it had a report (bad input, the store refused, no
 * drone, battery too low, takeoff failed, ...) prints this one: the
 * report's fields at their empty values, "ok" false and as "error" the
 * reason already said on stderr. ID is the mission recorded, or 0. */
static int print_failure(run_args *a, int rc, int64_t id)
{
    cJSON *doc = runner_report_new(NULL, 0);
    const char *why = cli_last_error();
    runner_report_set(doc, "error", cJSON_CreateString(*why ? why : "the mission did not start"));
    cJSON_AddNumberToObject(doc, "excursion_cm", 0);
    if (id > 0) cJSON_AddNumberToObject(doc, "mission_id", (double)id);
    a->reported = true;
    cli_print_json(doc);
    return rc == CLI_OK ? CLI_FAIL : rc;
}

int cmd_run(int argc, char **argv)
{
    run_args a = {.c = {.cmd = "run"}, .seed = 1, .max_replans = ~0ull};
    tello_config_init(&a.tello);
    vision_options_init(&a.vision);
    int64_t id = 0;
    int rc = parse_args(&a, argc, argv);
    if (rc < 0)
        rc = a.replay ? run_replay(&a) : run_mission(&a, &id);
    else if (rc == CLI_USAGE)
        a.c.json = wants_json(argc, argv);
    if (a.c.json && !a.reported && !a.c.help) rc = print_failure(&a, rc, id);
    return rc;
}
