/* One flight's lifecycle: see flight.h. */
#include "mission/flight.h"

#include "clock.h"

#include "errmsg.h"
#include "llm/prompt.h"
#include "mission/probe.h"
#include "mission/record.h"
#include "mission/replay.h"
#include "mission/watch_thread.h"
#include "mission/watchdog.h"
#include "skills/skills.h"
#include "vision/pipeline.h"

#include <stdlib.h>
#include <string.h>

/* One flight's state on its thread. */
typedef struct flight {
    const flight_config *c;
    mission_world world;
    mission_record *rec;
    mission_observer rec_obs; /* the store's observer */
    /* Where events go: the recorder, then the configuration's sinks. */
    flight_sink sinks[FLIGHT_MAX_SINKS + 1];
    int n_sinks;
    watchdog *dog;
    int64_t id;
    flight_outcome hung; /* the watchdog's outcome, once it fired */
    /* The front end's stop handle, or OWN_STOP when it gave none. */
    flight_handle *stop;
    flight_handle own_stop;
    /* The parts' lines for a user (notes_open), or NULL when no sink takes
     * notes; the line being written. */
    FILE *notes;
    char note[2048];
    size_t note_len;
} flight;

void flight_config_defaults(flight_config *c)
{
    memset(c, 0, sizeof *c);
    c->drone_name = "sim";
    c->land = true;
    c->stream = true;
    c->max_replans = -1;
}

int flight_add_sink(flight_config *c, const flight_sink *s)
{
    if (c->n_sinks >= FLIGHT_MAX_SINKS) return -1;
    c->sinks[c->n_sinks++] = *s;
    return 0;
}

void flight_outcome_free(flight_outcome *out)
{
    mission_report_free(&out->report);
}

char *flight_params_json(const flight_config *c)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "time_scale", c->sim.time_scale);
    if (c->plan && c->plan_file) /* for `aloft log`, which names what a --plan mission flew */
        cJSON_AddStringToObject(p, "plan_file", c->plan_file);
    if (c->task) {
        cJSON_AddBoolToObject(p, "stream", c->stream);
        if (c->max_tries) cJSON_AddNumberToObject(p, "max_tries", c->max_tries);
        if (c->max_replans >= 0) cJSON_AddNumberToObject(p, "max_replans", c->max_replans);
        if (c->candidates > 0) cJSON_AddNumberToObject(p, "candidates", c->candidates);
    }
    cJSON_AddNumberToObject(p, "max_instructions", (double)c->limits.max_instructions);
    cJSON_AddNumberToObject(p, "max_memory", (double)c->limits.max_memory);
    cJSON_AddNumberToObject(p, "timeout_ms", (double)c->limits.timeout_ms);
    if (c->sim.max_pictures) cJSON_AddNumberToObject(p, "max_pictures", c->sim.max_pictures);
    if (c->sim.max_picture_bytes)
        cJSON_AddNumberToObject(p, "max_picture_bytes", (double)c->sim.max_picture_bytes);
    cJSON *dirs = cJSON_AddArrayToObject(p, "skills");
    for (int i = 0; i < c->n_skill_dirs; i++) {
        char *abs = realpath(c->skill_dirs[i], NULL);
        cJSON_AddItemToArray(dirs, cJSON_CreateString(abs ? abs : c->skill_dirs[i]));
        free(abs);
    }
    char *text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    return text;
}

/* ---- events: one list of sinks, the recorder's first ------------------------ */

/* The recorder's observer (record.h) as the flight's first sink: what a
 * front end shows is on disk already. Its skill events are recorded by the
 * runner itself, which must cancel the sandbox on a failed write before the
 * skill acts. */
static void rec_llm(void *ud, mission_llm_kind kind, const llm_message *msgs, int nmsgs,
                    const llm_result *res)
{
    const mission_observer *o = ud;
    if (o->llm_exchange) o->llm_exchange(o->ud, kind, msgs, nmsgs, res);
}

static void rec_plan(void *ud, int index, const char *text, size_t len, const char *diagnostics)
{
    const mission_observer *o = ud;
    if (o->plan) o->plan(o->ud, index, text, len, diagnostics);
}

static void rec_candidate(void *ud, const mission_candidate *c)
{
    const mission_observer *o = ud;
    if (o->candidate) o->candidate(o->ud, c);
}

static void rec_scene(void *ud, const char *description)
{
    const mission_observer *o = ud;
    if (o->scene) o->scene(o->ud, description);
}

/* Calls EVENT (with its arguments) on every sink of FL that has it. */
#define EACH_SINK(fl, event, ...)                                                                  \
    for (int i = 0; i < (fl)->n_sinks; i++)                                                        \
        if ((fl)->sinks[i].event) (fl)->sinks[i].event((fl)->sinks[i].ud, __VA_ARGS__)

static void on_llm(void *ud, mission_llm_kind kind, const llm_message *msgs, int nmsgs,
                   const llm_result *res)
{
    EACH_SINK((flight *)ud, llm, kind, msgs, nmsgs, res);
}

static void on_plan(void *ud, int index, const char *text, size_t len, const char *diagnostics)
{
    EACH_SINK((flight *)ud, plan, index, text, len, diagnostics);
}

static void on_candidate(void *ud, const mission_candidate *c)
{
    EACH_SINK((flight *)ud, candidate, c);
}

static void on_plan_text(void *ud, int index, const char *text, size_t len)
{
    EACH_SINK((flight *)ud, plan_text, index, text, len);
}

static void on_statement(void *ud, int index, const char *text, size_t len, int depth)
{
    EACH_SINK((flight *)ud, statement, index, text, len, depth);
}

static void on_scene(void *ud, const char *description)
{
    EACH_SINK((flight *)ud, scene, description);
}

static void on_skill(void *ud, const skill_event *ev)
{
    flight *fl = ud;
    EACH_SINK(fl, skill, &fl->world, ev);
}

static void on_ran(void *ud, const runner_statement *st)
{
    EACH_SINK((flight *)ud, ran, st);
}

/* ---- notes: the parts' lines for a user --------------------------------- */

/* The flight's parts (the driver, the eyes, the runner, the mission
 * controller) write their lines for a user to a stream; this one hands
 * each line to the sinks' note. A line longer than the buffer is cut. */
static void note_end(flight *fl)
{
    fl->note[fl->note_len] = '\0';
    EACH_SINK(fl, note, fl->note);
    fl->note_len = 0;
}

static ssize_t notes_write(void *cookie, const char *buf, size_t n)
{
    flight *fl = cookie;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n')
            note_end(fl);
        else if (fl->note_len < sizeof fl->note - 1)
            fl->note[fl->note_len++] = buf[i];
    }
    return (ssize_t)n;
}

static int notes_close(void *cookie)
{
    flight *fl = cookie;
    if (fl->note_len) note_end(fl);
    return 0;
}

/* The notes stream, or NULL (quiet) when no sink takes notes. */
static FILE *notes_open(flight *fl)
{
    bool wanted = false;
    for (int i = 0; i < fl->n_sinks; i++)
        wanted = wanted || fl->sinks[i].note;
    if (!wanted) return NULL;
    FILE *f =
        fopencookie(fl, "w", (cookie_io_functions_t){.write = notes_write, .close = notes_close});
    if (f) setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

static mission_observer observer(flight *fl)
{
    return (mission_observer){.llm_exchange = on_llm,
                              .plan = on_plan,
                              .plan_text = on_plan_text,
                              .statement = on_statement,
                              .scene = on_scene,
                              .candidate = on_candidate,
                              .ud = fl};
}

/* ---- the watchdog and the front end's stop ------------------------------ */

/* The plan's sandbox goes to the stop handle, the front end's hook and the
 * watchdog. */
static void on_sandbox(void *ud, sandbox *sb)
{
    flight *fl = ud;
    flight_handle_sandbox(fl->stop, sb);
    if (fl->c->on_sandbox) fl->c->on_sandbox(fl->c->on_sandbox_ud, sb);
    /* After the front end's hook: this waits for a firing watchdog, whose
     * on_hang may take the front end's locks. */
    watchdog_watch(fl->dog, sb);
}

/* On the watchdog's thread, the flight's thread being stuck in its VM: land,
 * record the mission as hung and tell the front end. */
static void on_hang(void *ud, sandbox *sb, watchdog_why why, const char *msg)
{
    (void)sb, (void)why;
    flight *fl = ud;
    flight_outcome *h = &fl->hung;
    watchdog_end_mission(&fl->world, fl->rec, msg, h->error, sizeof h->error);
    h->mission_id = fl->id;
    h->status = STORE_HUNG;
    if (fl->world.drone) h->pose = mission_world_pose(&fl->world);
    if (fl->c->on_hang) fl->c->on_hang(fl->c->on_hang_ud, h);
}

static bool cancelled(const flight *fl)
{
    return flight_stopped(fl->stop);
}

/* The stop handle's flag, for the code that polls one. */
static atomic_bool *cancel_flag(flight *fl)
{
    return flight_handle_flag(fl->stop);
}

/* Ctrl-C or Stop before the plan runs (connect, takeoff, the Tello's video
 * stream): the driver's calls give up. */
static bool launch_aborted(void *ud)
{
    return cancelled(ud);
}

/* ---- the world ------------------------------------------------------------ */

static int not_cancelled(const flight *fl, char *err, size_t errlen)
{
    if (!cancelled(fl)) return 0;
    return errmsg_set(err, errlen, "cancelled before the plan started");
}

/* Opens the world: the simulator in the scene (it takes off at once), or
 * the Tello behind its limits, its camera, then connected (battery check)
 * and launched; the eyes of a detector, or the Tello's camera alone (see
 * mission_world_open_eyes). On failure the world holds what was opened:
 * close it. */
static int open_world(flight *fl, char *err, size_t errlen)
{
    const flight_config *c = fl->c;
    mission_world *w = &fl->world;
    bool real = c->tello || c->mavlink;
    if (real) {
        mavlink_config mc;
        if (c->mavlink) {
            mc = *c->mavlink;
            mc.progress = fl->notes; /* quiet when the flight is */
        }
        drone *drv = c->tello ? tello_new(c->tello, err, errlen) : mavlink_new(&mc, err, errlen);
        if (!drv || mission_world_wrap(w, drv, c->scene_path, err, errlen)) return -1;
        mission_world_pictures(w, c->sim.picture_dir, c->sim.max_pictures,
                               c->sim.max_picture_bytes);
        /* The camera before `streamon`: its first keyframe is not lost, and
         * the first frame is there by the time the drone is up. A MAVLink
         * vehicle's camera is a --source. */
        if (mission_world_open_eyes(w, c->vision, c->tello, fl->notes, err, errlen)) return -1;
        if (fl->notes && c->tello)
            fprintf(fl->notes, "connecting to the Tello at %s:%d\n", c->tello->host,
                    c->tello->port);
        w->drone->abort = launch_aborted;
        w->drone->abort_ud = fl;
        int rc = mission_world_launch(w, err, errlen);
        w->drone->abort = NULL;
        mission_world_camera_on(w);
        return rc ? -1 : not_cancelled(fl, err, errlen);
    }
    if (mission_world_sim_scene(w, c->scene, &c->sim, err, errlen)) return -1;
    mission_world_pictures(w, c->sim.picture_dir, c->sim.max_pictures, c->sim.max_picture_bytes);
    return mission_world_open_eyes(w, c->vision, NULL, fl->notes, err, errlen);
}

/* ---- flying ----------------------------------------------------------- */

static runner_opts run_opts(flight *fl)
{
    const flight_config *c = fl->c;
    return (runner_opts){
        .reg = c->reg,
        .world = &fl->world,
        .limits = c->limits,
        .progress = fl->notes,
        .on_sandbox = on_sandbox,
        .on_sandbox_ud = fl,
        .on_skill_event = on_skill,
        .on_skill_event_ud = fl,
        .on_statement = on_ran,
        .on_statement_ud = fl,
        .record = fl->rec,
        .t0_ms = mission_record_t0_ms(fl->rec),
    };
}

/* The given plan; its probes ask the configured LLM. */
static void fly_plan(flight *fl, runner_outcome *out, mission_report *rep)
{
    const flight_config *c = fl->c;
    run_probe rp = {.prompts_dir = c->prompts, .world = &fl->world, .cancel = cancel_flag(fl)};
    if (c->llm)
        rp.cfg = *c->llm;
    else
        llm_config_defaults(&rp.cfg);
    rp.obs = observer(fl);
    runner_opts ro = run_opts(fl);
    ro.plan = c->plan;
    ro.plan_len = c->plan_len;
    ro.outcome = out;
    ro.probe = run_probe_ask;
    ro.probe_ud = &rp;
    runner_run_report(&ro, rep);
    rep->llm_calls = rp.calls;
}

/* The task, through the mission controller. -1 with a message when it
 * could not start. */
static int fly_task(flight *fl, runner_outcome *out, mission_report *rep, char *err, size_t errlen)
{
    const flight_config *c = fl->c;
    prompt_set *ps = prompt_load(c->prompts, err, errlen);
    if (!ps) return -1;
    mission_opts mo;
    mission_opts_defaults(&mo);
    mo.run = run_opts(fl);
    mo.task = c->task;
    mo.prompts = ps;
    mo.llm = c->replies ? mission_replay_llm(c->replies) : mission_llm_default(c->llm);
    mo.obs = observer(fl);
    mo.stream = c->stream;
    if (c->max_tries > 0) mo.max_tries = c->max_tries;
    if (c->max_replans >= 0) mo.max_replans = c->max_replans;
    mo.cancel = cancel_flag(fl);
    mo.outcome = out;
    mo.vet = c->vet;
    mo.vet_ud = c->vet_ud;
    mo.candidates = c->candidates;
    if (!c->no_memory) mo.memory = mission_record_memory(fl->rec);
    mission_run_report(&mo, rep);
    prompt_free(ps);
    return 0;
}

/* ---- landing and the status -------------------------------------------- */

/* Lands the world (when the flight lands) before the mission's outcome is
 * recorded: a landing that fails or is never acknowledged makes the mission
 * fail (SPEC §7). Appends the reason to ERR (after what is there) and
 * returns -1 then. */
static int land_or_fail(flight *fl, char *err, size_t errlen)
{
    char why[600];
    if (!fl->c->land || mission_world_land(&fl->world, why, sizeof why) == 0) return 0;
    size_t n = strlen(err);
    snprintf(err + n, errlen - n, "%s%s", n ? "; " : "", why);
    return -1;
}

/* Ends the mission's record with OUT's status and error, and the result of
 * what flew (FLOWN: OUT's report has it; a plan without one ended as null). */
static void close_record(flight *fl, flight_outcome *out, bool flown)
{
    char err[600];
    cJSON *result = flown ? skill_value_json(&out->report.result) : NULL; /* the store's edge */
    int rc = mission_record_close(fl->rec, out->status, out->error[0] ? out->error : NULL, result,
                                  err, sizeof err);
    cJSON_Delete(result);
    if (rc) {
        out->recorded = false;
        snprintf(out->record_error, sizeof out->record_error,
                 "mission %lld not recorded to its end: %s", (long long)fl->id, err);
    }
    fl->rec = NULL;
}

/* OUT's counts and error from its report. */
static void read_report(flight_outcome *out)
{
    const mission_report *r = &out->report;
    out->plans = r->plans.n;
    out->tries = r->tries;
    out->replans = r->replans;
    out->llm_calls = r->llm_calls;
    snprintf(out->error, sizeof out->error, "%s", r->error ? r->error : "");
}

/* The report says the flight failed with OUT's error. */
static void report_failed(flight_outcome *out)
{
    out->report.ok = false;
    mission_report_error(&out->report, out->error);
}

/* Lands, maps the status and closes the record of a flight that flew. */
static void finish(flight *fl, flight_outcome *out)
{
    out->report.mission_id = fl->id;
    read_report(out);
    bool ok = out->report.ok;
    /* A hung flight whose thread came back after all stays as the watchdog
     * recorded and reported it: its drone was landed then. */
    if (watchdog_stop(fl->dog)) {
        fl->dog = NULL;
        out->status = STORE_HUNG;
        snprintf(out->error, sizeof out->error, "%s", fl->hung.error);
        report_failed(out);
        close_record(fl, out, true);
        return;
    }
    fl->dog = NULL;
    bool landed = land_or_fail(fl, out->error, sizeof out->error) == 0;
    if (!landed) {
        ok = false;
        report_failed(out);
    }
    /* The one mapping from how a flight ended to the status it is recorded
     * with: the report's "ok" decides between ok and not; the runner's
     * outcome (or the cancel flag: a cancelled LLM request) tells a cancel
     * from a failure. A failed landing is a failure, also after a cancel:
     * the drone may still be up. */
    store_status status = ok ? STORE_OK : runner_store_status(out->run.status);
    if (!ok && cancelled(fl)) status = STORE_CANCELLED;
    if ((status == STORE_OK && !ok) || !landed) status = STORE_FAILED;
    out->status = status;
    out->landed = landed;
    out->ok = ok;
    close_record(fl, out, true);
    /* "ok" would contradict the failure: a mission the store lost the end
     * of (a full disk) is reported as failed. */
    if (ok && !out->recorded) {
        out->ok = false;
        snprintf(out->error, sizeof out->error, "%s", out->record_error);
        report_failed(out);
    }
}

/* A flight that ended before a plan flew: lands what took off, records the
 * mission as failed (or cancelled) with ERR. */
static int abandon(flight *fl, flight_outcome *out, const char *err)
{
    snprintf(out->error, sizeof out->error, "%s", err);
    if (watchdog_stop(fl->dog)) {
        fl->dog = NULL;
        out->status = STORE_HUNG;
        snprintf(out->error, sizeof out->error, "%s", fl->hung.error);
        close_record(fl, out, false);
        return -1;
    }
    fl->dog = NULL;
    bool cancel = cancelled(fl);
    out->landed = land_or_fail(fl, out->error, sizeof out->error) == 0;
    out->status = cancel && out->landed ? STORE_CANCELLED : STORE_FAILED;
    close_record(fl, out, false);
    return -1;
}

/* Begins recording C's flight, reading poses from WORLD (may be NULL). */
static mission_record *record_begin(const flight_config *c, mission_world *world, int64_t *id,
                                    char *err, size_t errlen)
{
    char *params = flight_params_json(c);
    store_mission_info info = {.task = c->task,
                               .drone = c->drone_name ? c->drone_name : "sim",
                               .model = c->model,
                               .scene_json = c->scene_json,
                               .params_json = params,
                               .seed = (int64_t)c->sim.seed,
                               .replay_of = c->replay_of};
    mission_record *rec = c->store ? mission_record_begin(c->store, &info, world, err, errlen)
                                   : mission_record_open(c->db, &info, world, err, errlen);
    free(params);
    if (!rec) return NULL;
    *id = store_mission_id(mission_record_mission(rec));
    return rec;
}

int flight_refuse(const flight_config *c, const char *why, int64_t *id, char *err, size_t errlen)
{
    mission_record *rec = record_begin(c, NULL, id, err, errlen);
    if (!rec) return -1;
    const char *path = store_path(mission_record_store(rec));
    for (int i = 0; i < c->n_sinks; i++)
        if (c->sinks[i].begin) c->sinks[i].begin(c->sinks[i].ud, *id, path);
    mission_record_plan(rec, c->plan, c->plan_len, true, NULL);
    return mission_record_close(rec, STORE_FAILED, why, NULL, err, errlen);
}

static int open_record(flight *fl, flight_outcome *out)
{
    const flight_config *c = fl->c;
    char err[1024];
    fl->rec = record_begin(c, &fl->world, &fl->id, err, sizeof err);
    if (!fl->rec) {
        snprintf(out->error, sizeof out->error, "cannot record the mission: %s", err);
        return -1;
    }
    out->mission_id = fl->id;
    fl->rec_obs = mission_record_observer(fl->rec, c->llm ? c->llm->model : c->model);
    fl->sinks[0] = (flight_sink){.llm = rec_llm,
                                 .plan = rec_plan,
                                 .scene = rec_scene,
                                 .candidate = rec_candidate,
                                 .ud = &fl->rec_obs};
    for (int i = 0; i < c->n_sinks && i < FLIGHT_MAX_SINKS; i++)
        fl->sinks[1 + i] = c->sinks[i];
    fl->n_sinks = 1 + (c->n_sinks < FLIGHT_MAX_SINKS ? c->n_sinks : FLIGHT_MAX_SINKS);
    return 0;
}

static int fly_in_world(flight *fl, flight_outcome *out)
{
    const flight_config *c = fl->c;
    char err[1024] = "";
    EACH_SINK(fl, begin, fl->id, store_path(mission_record_store(fl->rec)));
    int opened = open_world(fl, err, sizeof err);
    /* After open_world, which clears the world: a landing after a cancel
     * hurries. */
    fl->world.cancel = cancel_flag(fl);
    if (opened) return abandon(fl, out, err);
    EACH_SINK(fl, world, &fl->world);
    /* The watch on the measured state between calls (SPEC §10), from the
     * takeoff to the landing. */
    double hover = mission_watch_hover_scale(&fl->world, c->sim.time_scale);
    mission_watch *mw = mission_watch_start(&fl->world, hover, err, sizeof err);
    if (!mw) return abandon(fl, out, err);
    int flew = 0;
    if (c->plan)
        fly_plan(fl, &out->run, &out->report);
    else
        flew = fly_task(fl, &out->run, &out->report, err, sizeof err);
    mission_watch_stop(mw);
    if (flew) return abandon(fl, out, err);
    out->report.has_frames = mission_world_frames(&fl->world, &out->report.frames);
    mission_world_take_pictures_log(&fl->world, &out->report.pictures);
    out->flown = true;
    finish(fl, out);
    return 0;
}

int flight_fly(const flight_config *c, flight_outcome *out)
{
    memset(out, 0, sizeof *out);
    mission_report_init(&out->report, NULL, 0);
    out->status = STORE_FAILED;
    out->landed = true;
    out->recorded = true;
    double t0 = clock_now_ms();
    flight *fl = calloc(1, sizeof *fl);
    if (!fl) return errmsg_set(out->error, sizeof out->error, "out of memory");
    fl->c = c;
    flight_handle_init(&fl->own_stop);
    fl->stop = c->stop ? c->stop : &fl->own_stop;
    if (open_record(fl, out)) {
        out->recorded = false;
        free(fl);
        return -1;
    }
    char err[512];
    fl->dog = watchdog_start(on_hang, fl, cancel_flag(fl), err, sizeof err);
    if (!fl->dog) fprintf(stderr, "aloft: %s\n", err);
    fl->notes = notes_open(fl);
    int rc = fly_in_world(fl, out);
    if (fl->world.drone) out->pose = mission_world_pose(&fl->world);
    mission_world_close(&fl->world, c->land);
    if (fl->rec) mission_record_free(fl->rec);
    if (fl->notes) fclose(fl->notes);
    out->total_ms = clock_now_ms() - t0;
    free(fl);
    return rc;
}
