/* aloft run: fly one mission (SPEC §2).
 *
 * Runs a given plan (--plan) or a task planned by the LLM (--task, the
 * mission controller) in the simulator (--scene) or on a Tello (--drone
 * tello, the scene optional: it only gives limits), recorded in the mission
 * store (--db), or flies a recorded simulator mission again (--replay).
 * --detector and --source give the mission real eyes: the vision pipeline
 * instead of the simulator's camera. */
#include "cmd/cli.h"
#include "cmd/cli_drone.h"
#include "drone/mavlink.h"
#include "drone/tello.h"
#include "mission/flight.h"
#include "mission/flight_progress.h"
#include "mission/replay.h"
#include "mission/runner.h"
#include "verify/gate.h"
#include "vision/options.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "Usage: aloft run [--drone sim|tello[:HOST]|mavlink[:URL]] [--scene S]\n"
    "                 (--plan FILE|- | --task TEXT) [options]\n"
    "\n"
    "Fly one mission. With --plan, run a MiniSpec plan as written; progress\n"
    "(every skill call with the simulated time) goes to stderr.\n"
    "\n"
    "  --scene FILE          the simulated world (docs/scene.md); with a Tello,\n"
    "                        optional: its limits (else the default limits)\n"
    "  --drone sim|tello[:HOST]  fly the simulator (default) or a Tello (default\n"
    "                        address 192.168.10.1): connect, battery check,\n"
    "                        takeoff, the plan, then land\n"
    "  --tello-port P        the Tello's command port (default 8889)\n"
    "  --tello-state-port P  local port of its state string (default 8890)\n"
    "  --tello-video-port P  local port of its video stream (default 11111)\n"
    "  --tello-timeout-ms N  reply timeout of one command (default 7000)\n"
    "  --no-video            no `streamon` (no camera for --detector)\n"
    "  --drone mavlink[:URL]  fly a PX4 or ArduPilot vehicle over MAVLink; URL is\n"
    "                        udpin:HOST:PORT (default udpin:0.0.0.0:14540),\n"
    "                        udpout:HOST:PORT, tcp:HOST:PORT or serial:DEVICE:BAUD\n"
    "  --mavlink-sysid N     the vehicle to fly among several on the link\n"
    "                        (default: the first one heard)\n"
    "  --mavlink-our-sysid N, --mavlink-our-compid N  our own ids (default 255, 190)\n"
    "  --mavlink-takeoff-cm N  height after takeoff (default 250)\n"
    "  --mavlink-ready-timeout-ms N  how long to wait for the vehicle to be ready\n"
    "                        to fly (default 90000)\n"
    "  --no-land             stay in the air when the mission ends (Tello, "
    "MAVLink)\n" VISION_RUN_HELP "  --plan FILE|-         the MiniSpec plan to fly\n"
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
    "                        With --drone tello it needs --scene\n" CLI_CANDIDATES_HELP
    "  --no-memory           planning prompts list no remembered objects of the\n"
    "                        world (by default those out of view are listed)\n"
    "  --skills DIR          also load the skill files of DIR (repeatable)\n"
    "  --max-instructions N  instruction budget (default 10000000)\n"
    "  --max-memory BYTES    memory cap, k/M/G suffixes allowed (default 16M)\n"
    "  --timeout-ms N        wall-clock limit (default 300000)\n"
    "  --in-process          run Lua in this process, not in a worker (debugging only)\n"
    "  --json                print the mission report as one JSON document\n"
    "  --db FILE             the mission store every run is recorded in (default\n"
    "                        $ALOFT_DB, else $XDG_DATA_HOME/aloft/aloft.db)\n"
    "  --replay ID           fly recorded mission ID again in the simulator with\n"
    "                        its scene, seed and plan or task, answering LLM\n"
    "                        requests with the recorded replies; says whether\n"
    "                        the skill calls match (exit 1 if not)\n"
    "\n"
    "With --drone tello and --detector yolo|hog, the camera is the Tello's video\n"
    "stream unless --source says otherwise; with no --detector the Tello's camera\n"
    "still takes pictures (vision skills fail). take_picture saves the camera's\n"
    "frame (the simulator's drawing when the simulator is the camera).\n"
    "\n"
    "With --drone mavlink a camera is any --source (an RTSP or UDP H.264 stream).\n"
    "\n"
    "Ctrl-C stops the mission at once (the drone hovers, a Tello or a MAVLink\n"
    "vehicle then lands unless --no-land); the report is still printed.\n"
    "Exit status: 0 success, 1 the plan or mission failed, 2 usage.\n";

enum {
    OPT_PLAN = OPT_FIRST_FREE,
    OPT_TASK,
    OPT_PICTURES,
    OPT_QUIET,
    OPT_REPLAY,
    OPT_VERIFY,
    OPT_MAX_PICTURES,
    OPT_MAX_PICTURE_BYTES,
    OPT_NO_MEMORY,
};

static const struct option run_options[] = {
    CLI_COMMON_OPTIONS,
    CLI_LIMIT_OPTIONS,
    CLI_FLIGHT_OPTIONS,
    {"scene", required_argument, 0, OPT_SCENE},
    {"plan", required_argument, 0, OPT_PLAN},
    {"task", required_argument, 0, OPT_TASK},
    {"pictures", required_argument, 0, OPT_PICTURES},
    {"quiet", no_argument, 0, OPT_QUIET},
    {"llm-idle-timeout-ms", required_argument, 0, OPT_LLM_IDLE},
    {"replay", required_argument, 0, OPT_REPLAY},
    {"verify", required_argument, 0, OPT_VERIFY},
    {"max-pictures", required_argument, 0, OPT_MAX_PICTURES},
    {"max-picture-bytes", required_argument, 0, OPT_MAX_PICTURE_BYTES},
    {"no-memory", no_argument, 0, OPT_NO_MEMORY},
    CLI_DRONE_OPTIONS,
    VISION_RUN_OPTIONS,
    {0, 0, 0, 0},
};

typedef struct run_args {
    cli_common c;
    const char *plan_path;
    const char *task;
    const char *pictures;
    unsigned long long max_pictures, max_picture_bytes; /* 0: the defaults */
    bool quiet;
    long long replay; /* --replay ID, or 0 */
    /* the LLM and the mission controller (--task), the simulator, --db */
    cli_flight_args f;
    cli_drone d; /* --drone and the drivers' options */
    /* the mission's eyes: --detector, --source, ... */
    vision_options vision;
    long verify;    /* --verify N worlds, or 0 */
    bool no_memory; /* --no-memory */
    bool reported;  /* the report went out (print_report) */
} run_args;

/* The --drone, Tello and vision options together; -1 when they fit, else
 * the exit status of the usage error. */
static int check_drone_and_eyes(run_args *a)
{
    const char *cmd = a->c.cmd;
    const vision_options *vo = &a->vision;
    char err[512];
    bool camera = vo->det.kind != VISION_DETECTOR_SIM; /* yolo or hog */
    const char *det = vo->det.kind == VISION_DETECTOR_YOLO ? "yolo" : "hog";
    const cli_drone *d = &a->d;
    const char *real = d->on_tello ? "tello" : "mavlink";
    if (vision_options_check(vo, err, sizeof err)) return cli_usage_error(cmd, "%s", err);
    int r = cli_drone_check(d, cmd);
    if (r >= 0) return r;
    if (d->on_tello || d->on_mavlink) {
        if (a->replay)
            return cli_usage_error(cmd, "--replay flies in the simulator: give no --drone %s",
                                   real);
        if (vo->detector_given && !camera)
            return cli_usage_error(cmd,
                                   "--detector sim sees only the simulated world: with "
                                   "--drone %s give --detector yolo or hog",
                                   real);
        if (d->on_mavlink && camera && !vo->source)
            return cli_usage_error(cmd,
                                   "--detector %s needs the vehicle's camera: give --source "
                                   "(an RTSP or UDP H.264 stream)",
                                   det);
        if (d->on_tello && camera && !vo->source && !d->tello.video)
            return cli_usage_error(cmd,
                                   "--no-video leaves --detector %s without a camera: "
                                   "give --source",
                                   det);
    } else {
        if (!a->replay && !a->c.scene)
            return cli_usage_error(cmd, "the simulator needs --scene FILE");
        if (camera && !vo->source)
            return cli_usage_error(cmd,
                                   "--detector %s needs a camera in the simulator: give "
                                   "--source FILE|webcam:N|udp://HOST:PORT",
                                   det);
    }
    /* Missing files are found now, not after the drone took off. */
    const char *files[] = {vo->det.model, vo->det.weights, vo->det.names};
    for (int i = 0; i < 3; i++)
        if (files[i] && access(files[i], R_OK) != 0)
            return cli_fail(cmd, "%s: cannot read it", files[i]);
    return -1;
}

/* Parses ARG into *N (k/M/G suffixes 1024-based when BINARY): 0 when it is
 * a number in LO..HI, else nonzero. */
static int in_range(const char *arg, unsigned long long lo, unsigned long long hi, bool binary,
                    unsigned long long *n)
{
    return cli_parse_u64(arg, binary, n) || *n < lo || *n > hi;
}

static int on_option(void *ud, int opt, const char *arg)
{
    run_args *a = ud;
    const char *cmd = a->c.cmd;
    char err[512];
    unsigned long long n;
    int r = vision_options_parse(&a->vision, opt, arg, err, sizeof err);
    if (r < 0) return cli_usage_error(cmd, "%s", err);
    if (r == 1) return 0;
    r = cli_flight_option(&a->f, cmd, opt, arg);
    if (!r) r = cli_drone_option(&a->d, cmd, opt, a->c.option, arg);
    if (r) return r < 0 ? CLI_USAGE : 0;
    switch (opt) {
    case OPT_PLAN: a->plan_path = arg; return 0;
    case OPT_TASK: a->task = arg; return 0;
    case OPT_PICTURES: a->pictures = arg; return 0;
    case OPT_QUIET: a->quiet = true; return 0;
    case OPT_NO_MEMORY: a->no_memory = true; return 0;
    case OPT_MAX_PICTURES:
        if (in_range(arg, 1, 100000, false, &a->max_pictures))
            return cli_usage_error(cmd, "--max-pictures: '%s' is not a number in 1..100000", arg);
        return 0;
    case OPT_MAX_PICTURE_BYTES:
        if (in_range(arg, 1, ~0ull, true, &a->max_picture_bytes))
            return cli_usage_error(cmd, "--max-picture-bytes: '%s' is not a size > 0", arg);
        return 0;
    case OPT_REPLAY:
        if (in_range(arg, 1, LLONG_MAX, false, &n))
            return cli_usage_error(cmd, "--replay: '%s' is not a mission id", arg);
        a->replay = (long long)n;
        return 0;
    case OPT_VERIFY:
        if (in_range(arg, 1, VERIFY_MAX_WORLDS, false, &n))
            return cli_usage_error(cmd, "--verify: '%s' is not a number of worlds in 1..%d", arg,
                                   VERIFY_MAX_WORLDS);
        a->verify = (long)n;
        return 0;
    default: return cli_usage_error(cmd, "unknown option");
    }
}

/* The options together (after each one alone passed on_option): -1 to go
 * on, else the exit status of the usage error. */
static int check_args(run_args *a, int argc, char **argv)
{
    const char *cmd = a->c.cmd;
    cli_flight_args *f = &a->f;
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (a->replay && (a->plan_path || a->task || a->c.scene))
        return cli_usage_error(cmd, "--replay flies the recorded plan and scene: "
                                    "give no --plan, --task or --scene");
    if (!a->plan_path && !a->task && !a->replay)
        return cli_usage_error(cmd, "give --plan FILE or --task TEXT");
    int r = check_drone_and_eyes(a);
    if (r >= 0) return r;
    if (f->prompts && (r = cli_check_prompts(cmd, f->prompts)) >= 0) return r;
    if (a->verify && a->replay)
        return cli_usage_error(cmd, "--replay flies a recorded mission: give no --verify");
    if (a->verify && !a->c.scene)
        return cli_usage_error(cmd, "--verify%s needs --scene FILE to sample worlds from",
                               a->d.on_tello     ? " on a Tello"
                               : a->d.on_mavlink ? " on a MAVLink vehicle"
                                                 : "");
    if (a->verify) f->no_stream = true; /* a plan is verified whole */
    if (f->candidates && !a->task)
        return cli_usage_error(cmd, "--candidates asks the LLM for plans: it needs --task");
    if (f->candidates) f->no_stream = true; /* each candidate is judged whole */
    if (a->plan_path && a->task) return cli_usage_error(cmd, "give --plan or --task, not both");
    if (!f->time_scale_set) f->time_scale = a->c.json ? 0 : 1;
    if (a->task) {
        if (!a->task[0]) return cli_usage_error(cmd, "--task: the task is empty");
        if (!cli_model(f->model))
            return cli_usage_error(cmd, "--task needs a model: give --model NAME or set "
                                        "ALOFT_MODEL");
    }
    return -1; /* go on */
}

static int parse_args(run_args *a, int argc, char **argv)
{
    int rc = cli_parse_options(&a->c, argc, argv, run_options, usage, on_option, a);
    return rc >= 0 ? rc : check_args(a, argc, argv);
}

/* --verify: the gate every plan passes before it flies (verify/gate.h). */
static void gate_init(const run_args *a, const skill_registry *reg, const scene *sc, verify_gate *g)
{
    memset(g, 0, sizeof *g);
    g->opts = (verify_opts){.reg = reg,
                            .scene = sc,
                            .worlds = (int)a->verify,
                            .seed = a->f.seed,
                            .limits = cli_limits(&a->c)};
    g->progress = a->quiet ? NULL : stderr;
    g->cancel_to = cli_cancel_sandbox;
}

/* ---- recording and replay ------------------------------------------------ */

/* Takes the recorded limits, skill directories and controller settings
 * (P, from the store) the command line did not give. */
static void apply_params(run_args *a, const replay_params *p)
{
    cli_flight_args *f = &a->f;
    if (!p->stream) f->no_stream = true;
    if (!f->max_tries && p->max_tries) f->max_tries = p->max_tries;
    if (!f->candidates) f->candidates = p->candidates;
    if (f->max_replans < 0 && p->max_replans >= 0) f->max_replans = p->max_replans;
    if (!a->c.limits.max_instructions) a->c.limits.max_instructions = p->limits.max_instructions;
    if (!a->c.limits.max_memory) a->c.limits.max_memory = p->limits.max_memory;
    if (!a->c.limits.timeout_ms) a->c.limits.timeout_ms = p->limits.timeout_ms;
    if (!a->max_pictures) a->max_pictures = (unsigned long long)p->max_pictures;
    if (!a->max_picture_bytes) a->max_picture_bytes = p->max_picture_bytes;
    for (int i = 0; !a->c.n_skill_dirs && i < p->n_skill_dirs && i < CLI_MAX_SKILL_DIRS; i++)
        a->c.skill_dirs[i] = p->skill_dirs[i];
    if (!a->c.n_skill_dirs)
        a->c.n_skill_dirs =
            p->n_skill_dirs < CLI_MAX_SKILL_DIRS ? p->n_skill_dirs : CLI_MAX_SKILL_DIRS;
}

/* What one run flies: a plan, or the task of A (the mission controller). */
typedef struct run_input {
    const char *plan; /* NULL for a task */
    size_t plan_len;
    const scene *scene;
    const char *scene_json; /* recorded with the mission (valid JSON), or NULL */
    int64_t replay_of;
    store_replay *replies; /* replay: the recorded LLM replies, or NULL */
} run_input;

/* The model a --task run asks (--model, else $ALOFT_MODEL), or NULL. */
static const char *model_name(const run_args *a)
{
    return a->task ? cli_model(a->f.model) : NULL;
}

/* The report of a run that ended before it had one of its own: the
 * report's fields at their empty values, "ok" false, ERROR, the mission ID
 * (when one was recorded) and the drone's POSE (when known). */
static cJSON *empty_report(const char *error, int64_t id, const drone_pose *pose)
{
    mission_report r;
    mission_report_init(&r, NULL, 0);
    mission_report_error(&r, error);
    r.mission_id = id;
    if (pose) mission_report_pose(&r, *pose);
    cJSON *doc = mission_report_json(&r);
    mission_report_free(&r);
    return doc;
}

/* On the watchdog's thread, the plan's thread being stuck: the flight
 * landed the drone and recorded the mission as hung; report, then exit
 * (the VM's thread may never return: joining it, or running exit()'s
 * handlers while it holds the state, could hang too). */
static void on_hang(void *ud, const flight_outcome *out)
{
    const run_args *a = ud;
    cJSON *doc = empty_report(out->error, out->mission_id, &out->pose);
    if (a->c.json) {
        cli_print_json(doc);
    } else {
        fprintf(stderr, "aloft run: %s\n", out->error);
        cJSON_Delete(doc);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(CLI_FAIL);
}

/* The flight of A flying IN (mission/flight.h); NAME holds the recorded
 * drone name. */
static void flight_setup(const run_args *a, const run_input *in, const skill_registry *reg,
                         const llm_config *llm, char *name, size_t namelen, flight_config *c)
{
    flight_config_defaults(c);
    cli_drone_flight(&a->d, c, name, namelen);
    c->sim = (sim_options){.time_scale = a->f.time_scale,
                           .seed = a->f.seed,
                           .picture_dir = a->pictures,
                           .max_pictures = (int)a->max_pictures,
                           .max_picture_bytes = a->max_picture_bytes};
    c->vision = &a->vision;
    c->scene = in->scene;
    c->scene_path = a->c.scene;
    c->scene_json = in->scene_json;
    c->task = a->task;
    c->plan = in->plan;
    c->plan_len = in->plan_len;
    if (a->plan_path) c->plan_file = strcmp(a->plan_path, "-") ? a->plan_path : "stdin";
    c->reg = reg;
    c->limits = cli_limits(&a->c);
    c->llm = llm;
    c->model = model_name(a);
    c->prompts = a->f.prompts;
    c->stream = !a->f.no_stream;
    c->max_tries = (int)a->f.max_tries;
    c->max_replans = (int)a->f.max_replans;
    c->candidates = a->f.candidates;
    c->no_memory = a->no_memory;
    c->replies = in->replies;
    c->replay_of = in->replay_of;
    c->skill_dirs = a->c.skill_dirs;
    c->n_skill_dirs = a->c.n_skill_dirs;
    c->db = a->f.db;
    /* The progress lines on stderr: one flight per process, so one printer. */
    static flight_progress progress;
    if (!a->quiet) flight_add_sink(c, (flight_sink[]){flight_progress_sink(&progress, stderr)});
    c->on_hang = on_hang;
    c->on_hang_ud = (void *)a;
}

/* --verify with --task: each plan starts from where the drone is. */
static void gate_from(void *ud, mission_world *w)
{
    verify_gate *g = ud;
    g->from = w;
}

/* Flies IN in the simulator or on the Tello, recorded as a new mission
 * (SPEC §12: every run is recorded; a store that cannot be opened stops
 * the run before it flies). The report, with "mission_id", goes to *DOC
 * (NULL if the run never started). Returns the exit status. Ctrl-C stops
 * the mission from the first connect to the last landing. */
static int fly(const run_args *a, const run_input *in, cJSON **doc, int64_t *id)
{
    *doc = NULL;
    skill_registry *reg = cli_load_registry(&a->c);
    if (!reg) return CLI_FAIL;
    llm_config llm;
    cli_flight_llm(&a->f, &llm);
    char name[300];
    flight_config c;
    flight_setup(a, in, reg, &llm, name, sizeof name, &c);
    verify_gate g;
    gate_init(a, reg, in->scene, &g);
    if (a->verify && a->task) {
        c.vet = verify_gate_check, c.vet_ud = &g;
        c.on_sandbox = verify_gate_mission_sandbox, c.on_sandbox_ud = &g;
        flight_add_sink(&c, &(flight_sink){.world = gate_from, .ud = &g});
    }
    /* Ctrl-C stops the flight from the first connect to the last landing. */
    flight_handle stop;
    flight_handle_init(&stop);
    c.stop = &stop;
    flight_outcome out;
    cli_cancel_begin_flight(&stop);
    int rc = flight_fly(&c, &out);
    cli_cancel_end();
    *id = out.mission_id;
    if (rc) {
        rc = cli_fail(a->c.cmd, "%s", out.error);
        cJSON_Delete(g.reports);
    } else {
        if (!out.landed) fprintf(stderr, "aloft %s: %s\n", a->c.cmd, out.error);
        rc = out.ok ? CLI_OK : CLI_FAIL;
        if (!out.recorded) rc = cli_fail(a->c.cmd, "%s", out.record_error);
        /* The edge: the typed report becomes the SPEC §2 document. */
        *doc = mission_report_json(&out.report);
        if (*doc && g.reports)
            cJSON_AddItemToObject(*doc, "verify", g.reports);
        else
            cJSON_Delete(g.reports);
    }
    flight_outcome_free(&out);
    registry_free(reg);
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

/* --replay ID: the recorded mission flown again as a new mission, then its
 * skill calls compared with the recorded ones. Exit 0 when they match (even
 * when the mission itself failed the same way again), 1 when they do not. */
static int run_replay(run_args *a)
{
    char err[1024];
    store *s = store_open(a->f.db, STORE_OPEN_EXISTING, err, sizeof err);
    if (!s) return cli_fail(a->c.cmd, "%s", err);
    store_replay *r = store_replay_open(s, a->replay, err, sizeof err);
    scene *sc = NULL;
    int rc = CLI_FAIL;
    if (!r) {
        cli_fail(a->c.cmd, "%s", err);
    } else if (!mission_replay_in_sim(s, a->replay, err, sizeof err)) {
        cli_fail(a->c.cmd, "%s", err);
    } else if (!store_replay_task(r) && !store_replay_plan(r, 0)) {
        cli_fail(a->c.cmd, "mission %lld recorded no plan", a->replay);
    } else if (!(sc = mission_replay_scene(r, err, sizeof err))) {
        cli_fail(a->c.cmd, "%s", err);
    } else {
        if (!a->f.seed_set) a->f.seed = (unsigned long long)store_replay_seed(r);
        replay_params params;
        mission_replay_params(store_replay_params(r), &params);
        apply_params(a, &params);
        /* A task flies through the controller, with the recorded replies
         * for an LLM; a --plan mission flies its plan. */
        a->task = store_replay_task(r);
        if (a->task && !a->f.model) a->f.model = store_replay_model(r);
        const char *plan = a->task ? NULL : store_replay_plan(r, 0);
        run_input f = {plan, plan ? strlen(plan) : 0, sc, store_replay_scene(r), a->replay, r};
        cJSON *doc;
        int64_t id = 0;
        fly(a, &f, &doc, &id);
        if (doc) {
            char why[1024] = "";
            int same = mission_replay_same_calls(s, a->replay, id, why, sizeof why);
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
        mission_replay_params_free(&params);
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
static int verify_first(const run_args *a, const run_input *f, cJSON **doc, cJSON **passed)
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
        char err[1024], name[300];
        int64_t id = 0;
        llm_config llm;
        cli_flight_llm(&a->f, &llm);
        flight_config c;
        flight_setup(a, f, reg, &llm, name, sizeof name, &c);
        int failed = flight_refuse(&c, why, &id, err, sizeof err);
        if (id > 0) cJSON_AddNumberToObject(*doc, "mission_id", (double)id);
        if (failed) fprintf(stderr, "aloft run: the refused run was not recorded: %s\n", err);
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
    run_input f = {plan, len, sc, scene_text, 0, NULL};
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
    const char *why = cli_last_error();
    a->reported = true;
    cli_print_json(empty_report(*why ? why : "the mission did not start", id, NULL));
    return rc == CLI_OK ? CLI_FAIL : rc;
}

int cmd_run(int argc, char **argv)
{
    run_args a = {.c = {.cmd = "run"}};
    cli_flight_args_init(&a.f);
    cli_drone_init(&a.d);
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
