/* The web UI's drones and their missions (see web_fleet.h). */
#include "web/web_fleet.h"

#include "drone/scene.h"
#include "drone/sim.h"
#include "drone/mavlink.h"
#include "drone/tello.h"
#include "llm/prompt.h"
#include "clock.h"
#include "mission/flight.h"
#include "vision/objects.h"
#include "vision/paint.h"
#include "vision/pipeline.h"
#include "vision/view.h"
#include "web/web_scenes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_W 640
#define FRAME_H 480
/* A camera whose newest frame is older than this shows "video lost". */
#define STALE_MS 1500.0

typedef struct web_drone {
    int id;
    web_fleet *fleet;
    char spec[300];
    bool tello;
    tello_config tcfg;
    bool mavlink;
    mavlink_config mcfg;
    /* The simulator's scene, or the real drone's limits (or NULL); shared with
     * the fleet's other drones in that scene file, and so is its camera. */
    const web_scene *scene;
    web_events *events;

    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t idle;  /* busy went false, or hung true */
    bool busy;
    /* The watchdog ended a mission whose thread is stuck in its VM: the
     * drone was landed, and takes no new mission from this process. */
    bool hung;
    bool joinable; /* a mission thread ran and is not joined yet */
    pthread_t thread;
    int run;    /* missions started */
    char *task; /* the current or last one */
    drone_pose pose;
    char *last_scene;   /* the last scene description the controller saw */
    flight_handle stop; /* the current mission's (Stop, shutdown) */

    /* A real drone's camera: the eyes of its current or last mission
     * (vision/pipeline.h, held with a reference; closed with the mission's
     * world, when it has no frames). Under cam_lock. */
    pthread_mutex_t cam_lock;
    struct vision_pipeline *eyes;
} web_drone;

struct web_fleet {
    const web_fleet_config *cfg;
    store *store; /* one connection for every mission of the process */
    web_scenes *scenes;
    web_drone *drones;
    int n, cap; /* drones opened, and to open */
    atomic_bool shut;
};

static cJSON *pose_json(drone_pose p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "x", p.x);
    cJSON_AddNumberToObject(o, "y", p.y);
    cJSON_AddNumberToObject(o, "z", p.z);
    cJSON_AddNumberToObject(o, "yaw", p.yaw);
    return o;
}

static void set_pose(web_drone *d, drone_pose p)
{
    pthread_mutex_lock(&d->lock);
    d->pose = p;
    pthread_mutex_unlock(&d->lock);
}

/* The simulator's pose hook: the camera follows a motion as it happens. */
static void moved(void *ud, const drone_pose *pose)
{
    set_pose(ud, *pose);
}

static drone_pose get_pose(web_drone *d)
{
    pthread_mutex_lock(&d->lock);
    drone_pose p = d->pose;
    pthread_mutex_unlock(&d->lock);
    return p;
}

/* ---- opening ---------------------------------------------------------- */

/* A vehicle (link and system id) given to two drones would have two
 * missions fly it at once: refused when serve starts. */
static int vehicle_taken(web_fleet *f, const web_drone *d, char *err, size_t errlen)
{
    char a[320], b[320];
    mavlink_config_name(&d->mcfg, a, sizeof a);
    for (int i = 0; i < d->id && d->mcfg.sysid; i++) {
        const web_drone *o = &f->drones[i];
        if (o->mavlink && o->mcfg.sysid == d->mcfg.sysid &&
            strcmp(a, mavlink_config_name(&o->mcfg, b, sizeof b)) == 0)
            return snprintf(err, errlen, "--drone %s: vehicle %d of %s is drone %d's already",
                            d->spec, d->mcfg.sysid, a, o->id),
                   -1;
    }
    return 0;
}

static int open_drone(web_fleet *f, web_drone *d, const char *spec, const char *default_scene,
                      char *err, size_t errlen)
{
    char msg[512];
    snprintf(d->spec, sizeof d->spec, "%s", spec);
    size_t share = WEB_EVENTS_FLEET_BYTES / (size_t)f->cap;
    d->events = web_events_new_capped(share > WEB_EVENTS_MIN_BYTES ? share : WEB_EVENTS_MIN_BYTES);
    if (!d->events) return snprintf(err, errlen, "out of memory"), -1;
    if (f->cfg->tello)
        d->tcfg = *f->cfg->tello;
    else
        tello_config_init(&d->tcfg);
    int r = tello_config_option(&d->tcfg, "drone", spec, msg, sizeof msg);
    if (r < 0) return snprintf(err, errlen, "--drone %s: %s", spec, msg), -1;
    if (r == 1) {
        d->tello = true;
        /* The Tello keeps the default limits unless --scene gives some. */
        if (!default_scene) return 0;
        d->scene = web_scenes_get(f->scenes, default_scene, false, msg, sizeof msg);
        return d->scene ? 0 : (snprintf(err, errlen, "drone %d: %s", d->id, msg), -1);
    }
    mavlink_config_init(&d->mcfg);
    r = mavlink_config_spec(&d->mcfg, spec, msg, sizeof msg);
    if (r < 0) return snprintf(err, errlen, "%s", msg), -1;
    if (r == 1) {
        /* Several on one link: each flies its ",sysid=N" or else the first
         * vehicle no other one flies. Limits as for the Tello. */
        if (vehicle_taken(f, d, err, errlen)) return -1;
        d->mavlink = true;
        if (!default_scene) return 0;
        d->scene = web_scenes_get(f->scenes, default_scene, false, msg, sizeof msg);
        return d->scene ? 0 : (snprintf(err, errlen, "drone %d: %s", d->id, msg), -1);
    }
    const char *path = NULL;
    if (strcmp(spec, "sim") == 0)
        path = default_scene;
    else if (strncmp(spec, "sim:", 4) == 0 && spec[4])
        path = spec + 4;
    else
        return snprintf(err, errlen,
                        "--drone %s: expected sim:SCENE, sim, tello, tello:HOST, mavlink or "
                        "mavlink:URL[,sysid=N]",
                        spec),
               -1;
    if (!path) return snprintf(err, errlen, "--drone sim needs --scene FILE"), -1;
    d->scene = web_scenes_get(f->scenes, path, true, msg, sizeof msg);
    if (!d->scene) return snprintf(err, errlen, "drone %d: %s", d->id, msg), -1;
    d->pose = web_scenes_start(f->scenes, d->scene);
    return 0;
}

static int max_drones(const web_fleet_config *cfg)
{
    return cfg->max_drones > 0 ? cfg->max_drones : WEB_DEFAULT_MAX_DRONES;
}

web_fleet *web_fleet_new(const web_fleet_config *cfg, const char *const *specs, int n,
                         const char *default_scene, char *err, size_t errlen)
{
    if (n < 1 || n > max_drones(cfg)) {
        snprintf(err, errlen, "between 1 and %d drones (--max-drones), not %d", max_drones(cfg), n);
        return NULL;
    }
    web_fleet *f = calloc(1, sizeof *f);
    if (!f) return snprintf(err, errlen, "out of memory"), NULL;
    f->cfg = cfg;
    atomic_init(&f->shut, false);
    f->cap = n;
    f->drones = calloc((size_t)n, sizeof *f->drones);
    f->scenes = web_scenes_new(cfg->seed);
    if (!f->drones || !f->scenes) {
        web_fleet_free(f);
        return snprintf(err, errlen, "out of memory"), NULL;
    }
    /* Opened once: a mission then starts without a schema check, its own
     * prepared statements or a write lock taken from the others. */
    char msg[768];
    f->store = store_open(cfg->db, 0, msg, sizeof msg);
    if (!f->store) {
        web_fleet_free(f);
        return snprintf(err, errlen, "the mission store: %s", msg), NULL;
    }
    for (int i = 0; i < n; i++) {
        web_drone *d = &f->drones[i];
        d->id = i;
        d->fleet = f;
        pthread_mutex_init(&d->lock, NULL);
        pthread_mutex_init(&d->cam_lock, NULL);
        pthread_cond_init(&d->idle, NULL);
        flight_handle_init(&d->stop);
        f->n++;
        if (open_drone(f, d, specs[i], default_scene, err, errlen)) {
            web_fleet_free(f);
            return NULL;
        }
    }
    return f;
}

void web_fleet_shutdown(web_fleet *f)
{
    if (!f || atomic_exchange(&f->shut, true)) return;
    for (int i = 0; i < f->n; i++)
        web_fleet_stop(f, i);
    for (int i = 0; i < f->n; i++) {
        web_drone *d = &f->drones[i];
        pthread_mutex_lock(&d->lock);
        /* A cancelled mission ends within a second, or the watchdog marks
         * it hung a second later: a hung thread is never waited for. */
        while (d->joinable && d->busy && !d->hung)
            pthread_cond_wait(&d->idle, &d->lock);
        bool join = d->joinable && !d->hung;
        d->joinable = false;
        pthread_mutex_unlock(&d->lock);
        if (join) pthread_join(d->thread, NULL);
        if (d->events) web_events_close(d->events);
    }
}

bool web_fleet_hung(web_fleet *f)
{
    bool hung = false;
    for (int i = 0; i < f->n; i++) {
        pthread_mutex_lock(&f->drones[i].lock);
        hung = hung || f->drones[i].hung;
        pthread_mutex_unlock(&f->drones[i].lock);
    }
    return hung;
}

void web_fleet_free(web_fleet *f)
{
    if (!f) return;
    web_fleet_shutdown(f);
    /* A stuck mission thread still holds its drone's state: leave it all
     * to the process's end. */
    if (web_fleet_hung(f)) return;
    for (int i = 0; i < f->n; i++) {
        web_drone *d = &f->drones[i];
        vision_pipeline_unref(d->eyes);
        web_events_free(d->events);
        free(d->task);
        free(d->last_scene);
        pthread_mutex_destroy(&d->lock);
        pthread_mutex_destroy(&d->cam_lock);
        pthread_cond_destroy(&d->idle);
    }
    free(f->drones);
    web_scenes_free(f->scenes);
    store_close(f->store);
    free(f);
}

int web_fleet_count(const web_fleet *f)
{
    return f->n;
}

web_events *web_fleet_events(web_fleet *f, int id)
{
    return f->drones[id].events;
}

/* ---- the camera --------------------------------------------------------- */

/* What drone D's camera sees now: up to MAX objects, or -1 without one. */
static int view(web_drone *d, vision_object *out, int max)
{
    if (d->tello || d->mavlink || !d->scene) return -1;
    drone_pose p = get_pose(d);
    return web_scenes_view(d->fleet->scenes, d->scene, &p, out, max);
}

/* A frame that says CAPTION on grey: a real drone's camera with no video.
 * Painted in C and encoded as JPEG. */
static unsigned char *placeholder(const char *caption, size_t *len, char *err, size_t errlen)
{
    vision_frame fr = {FRAME_W, FRAME_H, FRAME_W * 3, malloc((size_t)FRAME_W * FRAME_H * 3), 0, 0};
    if (!fr.bgr) return snprintf(err, errlen, "out of memory"), NULL;
    memset(fr.bgr, 64, (size_t)FRAME_W * FRAME_H * 3);
    paint_image img = {FRAME_W, FRAME_H, fr.bgr};
    static const unsigned char ink[3] = {230, 230, 230};
    int tw, th;
    paint_text_size(caption, 2, &tw, &th);
    int x = tw < FRAME_W ? (FRAME_W - tw) / 2 : 4;
    paint_text(&img, x, (FRAME_H - th) / 2, caption, ink, 2);
    unsigned char *jpeg = vision_jpeg_encode(&fr, 80, len);
    free(fr.bgr);
    if (!jpeg) snprintf(err, errlen, "cannot encode the camera placeholder");
    return jpeg;
}

/* Drone D's real camera: the newest frame of its mission's eyes with the
 * detections drawn, or a placeholder that says why there is none. */
static unsigned char *real_frame(web_drone *d, size_t *len, char *err, size_t errlen)
{
    unsigned char *jpeg = NULL;
    double t = -1;
    pthread_mutex_lock(&d->cam_lock);
    bool eyes = false;
    if (d->eyes) {
        vision_stats st;
        vision_pipeline_stats(d->eyes, &st);
        eyes = !st.ended; /* the mission is over: its camera closed */
        vision_object objs[VISION_MAX_OBJECTS];
        if (eyes) vision_pipeline_latest(d->eyes, objs, VISION_MAX_OBJECTS, &t, &jpeg, len);
    }
    pthread_mutex_unlock(&d->cam_lock);
    double age = clock_now_ms() - t;
    if (jpeg && t >= 0 && age <= STALE_MS) return jpeg;
    free(jpeg);
    char caption[160];
    if (d->tello && !d->tcfg.video)
        snprintf(caption, sizeof caption, "no video (--no-video)");
    else if (!eyes)
        snprintf(caption, sizeof caption, "no video: the camera streams during a mission");
    else if (t < 0)
        snprintf(caption, sizeof caption, "no video yet");
    else
        snprintf(caption, sizeof caption, "video lost: no frame for %.0f s", age / 1e3);
    return placeholder(caption, len, err, errlen);
}

unsigned char *web_fleet_frame(web_fleet *f, int id, size_t *len, char *err, size_t errlen)
{
    web_drone *d = &f->drones[id];
    if (d->tello || d->mavlink) return real_frame(d, len, err, errlen);
    vision_object objs[VISION_MAX_OBJECTS];
    int n = view(d, objs, VISION_MAX_OBJECTS);
    drone_pose p = get_pose(d);
    char caption[160];
    if (n < 0)
        snprintf(caption, sizeof caption, "drone %d (%.60s): no camera stream", id, d->spec);
    else
        snprintf(caption, sizeof caption, "drone %d  x:%.0f y:%.0f z:%.0f yaw:%.0f", id, p.x, p.y,
                 p.z, p.yaw);
    return vision_view_jpeg(FRAME_W, FRAME_H, objs, n < 0 ? 0 : n, caption, len, err, errlen);
}

cJSON *web_fleet_json(web_fleet *f)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < f->n; i++) {
        web_drone *d = &f->drones[i];
        vision_object objs[VISION_MAX_OBJECTS];
        int n = view(d, objs, VISION_MAX_OBJECTS);
        char desc[4096] = "";
        if (n >= 0) vision_describe(objs, n, desc, sizeof desc);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", i);
        cJSON_AddStringToObject(o, "kind", d->tello ? "tello" : d->mavlink ? "mavlink" : "sim");
        cJSON_AddStringToObject(o, "spec", d->spec);
        pthread_mutex_lock(&d->lock);
        cJSON_AddBoolToObject(o, "busy", d->busy);
        cJSON_AddBoolToObject(o, "hung", d->hung);
        cJSON_AddNumberToObject(o, "run", d->run);
        if (d->task)
            cJSON_AddStringToObject(o, "task", d->task);
        else
            cJSON_AddNullToObject(o, "task");
        cJSON_AddItemToObject(o, "pose", pose_json(d->pose));
        const char *scene_text = n >= 0 ? desc : d->last_scene ? d->last_scene : "";
        cJSON_AddStringToObject(o, "scene", scene_text);
        pthread_mutex_unlock(&d->lock);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* ---- a mission ------------------------------------------------------------ */

/* One mission's web side: what its sink and hooks need. */
typedef struct web_flight {
    web_drone *d;
    int run;
    int64_t mission_id;
} web_flight;

static void emit(web_drone *d, const char *kind, cJSON *data)
{
    web_events_add(d->events, kind, data);
}

static void ev_begin(void *ud, int64_t mission_id, const char *store_path)
{
    (void)store_path;
    web_flight *wf = ud;
    wf->mission_id = mission_id;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run", wf->run);
    cJSON_AddNumberToObject(o, "mission_id", (double)mission_id);
    emit(wf->d, "mission", o);
}

static void ev_world(void *ud, mission_world *w)
{
    web_flight *wf = ud;
    web_drone *d = wf->d;
    set_pose(d, mission_world_pose(w));
    /* The card shows this mission's camera from now on (the last one's
     * until the next mission opens its own). */
    struct vision_pipeline *eyes =
        w->eyes && vision_pipeline_has_pixels(w->eyes) ? vision_pipeline_ref(w->eyes) : NULL;
    pthread_mutex_lock(&d->cam_lock);
    struct vision_pipeline *old = d->eyes;
    d->eyes = eyes;
    pthread_mutex_unlock(&d->cam_lock);
    vision_pipeline_unref(old);
}

static void ev_llm(void *ud, mission_llm_kind kind, const llm_message *msgs, int nmsgs,
                   const llm_result *res)
{
    (void)msgs, (void)nmsgs;
    web_flight *wf = ud;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", mission_llm_kind_name(kind));
    cJSON_AddStringToObject(o, "status", llm_status_name(res->status));
    cJSON_AddStringToObject(o, "error", res->error);
    cJSON_AddNumberToObject(o, "latency_ms", res->latency_ms);
    emit(wf->d, "llm", o);
}

static void ev_plan(void *ud, int index, const char *plan, size_t len, const char *diagnostics)
{
    (void)len;
    web_flight *wf = ud;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "plan", index);
    cJSON_AddStringToObject(o, "text", plan);
    cJSON_AddBoolToObject(o, "ok", diagnostics == NULL);
    if (diagnostics)
        cJSON_AddStringToObject(o, "diagnostics", diagnostics);
    else
        cJSON_AddNullToObject(o, "diagnostics");
    emit(wf->d, "plan", o);
}

/* A cJSON string of LEN bytes of S (which need not end there). */
static cJSON *string_n(const char *s, size_t len)
{
    char *t = malloc(len + 1);
    if (!t) return cJSON_CreateNull();
    memcpy(t, s, len);
    t[len] = '\0';
    cJSON *o = cJSON_CreateString(t);
    free(t);
    return o;
}

static void ev_plan_text(void *ud, int index, const char *text, size_t len)
{
    web_flight *wf = ud;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "plan", index);
    cJSON_AddItemToObject(o, "text", string_n(text, len));
    emit(wf->d, "plan_text", o);
}

static void ev_statement(void *ud, int index, const char *text, size_t len, int depth)
{
    web_flight *wf = ud;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "plan", index);
    cJSON_AddItemToObject(o, "text", string_n(text, len));
    cJSON_AddNumberToObject(o, "depth", depth);
    emit(wf->d, "statement", o);
}

static void ev_scene(void *ud, const char *description)
{
    web_flight *wf = ud;
    web_drone *d = wf->d;
    char *copy = strdup(description);
    pthread_mutex_lock(&d->lock);
    free(d->last_scene);
    d->last_scene = copy;
    pthread_mutex_unlock(&d->lock);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", description);
    emit(d, "scene", o);
}

static void ev_skill(void *ud, mission_world *w, const skill_event *ev)
{
    web_flight *wf = ud;
    web_drone *d = wf->d;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "skill", ev->skill->name);
    cJSON_AddNumberToObject(o, "depth", ev->depth);
    switch (ev->kind) {
    case SKILL_EVENT_CALL: {
        cJSON_AddItemToObject(o, "args", skill_values_json(ev->args, ev->nargs));
        const skill_value *text = ev->nargs > 0 ? &ev->args[0] : NULL;
        bool is_log = strcmp(ev->skill->name, "log") == 0 && text && text->kind == SKILL_VALUE_STR;
        if (is_log) {
            cJSON *l = cJSON_CreateObject();
            cJSON_AddStringToObject(l, "text", text->s);
            emit(d, "call", o);
            emit(d, "log", l);
            return;
        }
        emit(d, "call", o);
        return;
    }
    case SKILL_EVENT_RETURN: {
        drone_pose p = mission_world_pose(w);
        set_pose(d, p);
        cJSON_AddItemToObject(o, "ret", ev->ret ? skill_value_json(ev->ret) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "pose", pose_json(p));
        emit(d, "return", o);
        return;
    }
    case SKILL_EVENT_VIOLATION:
        cJSON_AddStringToObject(o, "reason", ev->reason ? ev->reason : "");
        emit(d, "violation", o);
        return;
    }
    cJSON_Delete(o);
}

/* The mission's last event, from its typed outcome. */
static cJSON *end_event(int run, const flight_outcome *out)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run", run);
    if (out->mission_id > 0)
        cJSON_AddNumberToObject(o, "mission_id", (double)out->mission_id);
    else
        cJSON_AddNullToObject(o, "mission_id");
    cJSON_AddStringToObject(o, "status", store_status_name(out->status));
    if (out->error[0])
        cJSON_AddStringToObject(o, "error", out->error);
    else
        cJSON_AddNullToObject(o, "error");
    /* What flew, in the words of the run report's one encoder. */
    cJSON *report = out->flown ? mission_report_json(&out->report) : NULL;
    static const char *const keep[] = {"result", "logs", "pose", "plans", "tries", "replans"};
    for (size_t i = 0; report && i < sizeof keep / sizeof *keep; i++) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(report, keep[i]);
        if (v) cJSON_AddItemToObject(o, keep[i], v);
    }
    cJSON_Delete(report);
    return o;
}

/* On the watchdog's thread, the mission's thread being stuck in its VM: the
 * flight landed and recorded it as hung; report it and mark the drone. */
static void on_hang(void *ud, const flight_outcome *out)
{
    web_flight *wf = ud;
    web_drone *d = wf->d;
    fprintf(stderr, "aloft serve: drone %d: %s\n", d->id, out->error);
    set_pose(d, out->pose);
    pthread_mutex_lock(&d->lock);
    d->hung = true;
    pthread_cond_broadcast(&d->idle);
    pthread_mutex_unlock(&d->lock);
    emit(d, "end", end_event(wf->run, out));
}

/* The flight of drone D's task (mission/flight.h). */
static void flight_setup(web_drone *d, web_flight *wf, const char *task, char *name, size_t namelen,
                         flight_config *fc)
{
    const web_fleet_config *c = d->fleet->cfg;
    flight_config_defaults(fc);
    if (d->tello) {
        fc->tello = &d->tcfg;
        snprintf(name, namelen, "tello:%s", d->tcfg.host);
        fc->drone_name = name;
    } else if (d->mavlink) {
        fc->mavlink = &d->mcfg;
        fc->drone_name = mavlink_config_name(&d->mcfg, name, namelen);
    }
    fc->sim = (sim_options){
        .time_scale = c->time_scale, .seed = c->seed, .on_pose = moved, .on_pose_ud = d};
    fc->scene = d->scene ? &d->scene->sc : NULL;
    fc->scene_path = d->scene ? d->scene->path : NULL;
    fc->scene_json = d->scene ? d->scene->json : NULL;
    fc->task = task;
    fc->reg = c->reg;
    fc->limits = c->limits;
    fc->llm = c->llm;
    fc->model = c->llm->model;
    fc->prompts = c->prompts;
    fc->stream = c->stream;
    fc->max_tries = c->max_tries;
    fc->max_replans = c->max_replans;
    fc->candidates = c->candidates;
    fc->skill_dirs = c->skill_dirs;
    fc->n_skill_dirs = c->n_skill_dirs;
    fc->db = c->db;
    fc->store = d->fleet->store;
    fc->stop = &d->stop;
    fc->on_hang = on_hang;
    fc->on_hang_ud = wf;
    flight_sink events = {.begin = ev_begin,
                          .world = ev_world,
                          .llm = ev_llm,
                          .plan_text = ev_plan_text,
                          .plan = ev_plan,
                          .statement = ev_statement,
                          .scene = ev_scene,
                          .skill = ev_skill,
                          .ud = wf};
    flight_add_sink(fc, &events);
}

/* The mission thread: flies the task, then reports. */
static void *mission_main(void *arg)
{
    web_drone *d = arg;
    pthread_mutex_lock(&d->lock);
    char *task = strdup(d->task);
    web_flight wf = {.d = d, .run = d->run};
    pthread_mutex_unlock(&d->lock);
    flight_outcome out;
    memset(&out, 0, sizeof out);
    mission_report_init(&out.report, NULL, 0);
    cJSON *end = NULL;
    if (!task) {
        out.status = STORE_FAILED;
        snprintf(out.error, sizeof out.error, "cannot record the mission: out of memory");
        end = end_event(wf.run, &out);
    } else {
        char name[300];
        flight_config fc;
        flight_setup(d, &wf, task, name, sizeof name, &fc);
        flight_fly(&fc, &out);
        if (!out.recorded && out.record_error[0])
            fprintf(stderr, "aloft serve: %s\n", out.record_error);
        if (out.flown) set_pose(d, out.pose);
        /* A hung mission was reported by the watchdog already. */
        if (out.status != STORE_HUNG) end = end_event(wf.run, &out);
    }
    flight_outcome_free(&out);
    free(task);
    /* Not busy by the time a client sees the end: a mission started on
     * the "end" event is never refused as busy. */
    pthread_mutex_lock(&d->lock);
    d->busy = false;
    if (end) emit(d, "end", end);
    pthread_cond_broadcast(&d->idle);
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

int web_fleet_start(web_fleet *f, int id, const char *task, int *run, char *err, size_t errlen)
{
    web_drone *d = &f->drones[id];
    char *copy = strdup(task);
    if (!copy) return snprintf(err, errlen, "out of memory"), WEB_ERROR;
    pthread_mutex_lock(&d->lock);
    bool shut = atomic_load(&f->shut);
    if (d->hung) {
        pthread_mutex_unlock(&d->lock);
        free(copy);
        return snprintf(err, errlen,
                        "drone %d hung in an earlier mission and was landed: it takes "
                        "no more missions until the server restarts",
                        id),
               WEB_ERROR;
    }
    if (d->busy || shut) {
        pthread_mutex_unlock(&d->lock);
        free(copy);
        if (shut) return snprintf(err, errlen, "the server is stopping"), WEB_ERROR;
        return WEB_BUSY;
    }
    /* The last mission's thread ended (busy is cleared last): collect it. */
    if (d->joinable) pthread_join(d->thread, NULL);
    d->joinable = false;
    d->busy = true;
    flight_handle_init(&d->stop); /* the last mission's thread has ended */
    free(d->task);
    d->task = copy;
    *run = ++d->run;
    web_events_reset(d->events);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run", d->run);
    cJSON_AddStringToObject(o, "task", task);
    web_events_add(d->events, "start", o);
    int rc = pthread_create(&d->thread, NULL, mission_main, d);
    if (rc == 0) {
        d->joinable = true;
    } else {
        d->busy = false;
        snprintf(err, errlen, "cannot start the mission thread");
    }
    pthread_mutex_unlock(&d->lock);
    return rc == 0 ? WEB_STARTED : WEB_ERROR;
}

bool web_fleet_stop(web_fleet *f, int id)
{
    web_drone *d = &f->drones[id];
    pthread_mutex_lock(&d->lock);
    bool busy = d->busy;
    if (busy) flight_stop(&d->stop);
    pthread_mutex_unlock(&d->lock);
    return busy;
}
