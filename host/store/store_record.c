/*
 * Recording a mission as it happens. Every function here is one job of the
 * store's writer (store_writer.h) and returns once the group holding it is
 * committed, so each event is on disk before the caller lets the drone do
 * anything else; missions recording at once share a commit.
 */
#include "store/store_writer.h"

#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double elapsed_ms(const store_mission *m)
{
    return clock_now_ms() - m->t0_ms;
}

double store_mission_elapsed_ms(const store_mission *m)
{
    return elapsed_ms(m);
}

int store_mission_plans(const store_mission *m)
{
    return m->plans;
}

int64_t store_mission_id(const store_mission *m)
{
    return m->id;
}

static double event_time(const store_mission *m, double t_ms)
{
    return t_ms < 0 ? elapsed_ms(m) : t_ms;
}

void store_mission_lose(store_mission *m, const char *err)
{
    pthread_mutex_lock(&m->s->lock);
    if (!m->lost[0]) snprintf(m->lost, sizeof m->lost, "%s", err);
    pthread_mutex_unlock(&m->s->lock);
}

int store_mission_take_lost(store_mission *m, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->s->lock);
    int ret = 0;
    if (m->lost[0]) {
        ret = errmsg_set(err, errlen, "%s", m->lost);
        m->lost[0] = '\0';
    }
    pthread_mutex_unlock(&m->s->lock);
    return ret;
}

/* Runs J, a record of M, and waits for it: -1 with its error, or with the
 * error of a record of M handed over before it that was lost (covered by
 * J's own error when J failed too, as in one failed group). */
static int run_waited(store_mission *m, store_job *j, char *err, size_t errlen)
{
    int rc = store_writer_run(m->s, j);
    char lost[512];
    bool was_lost = store_mission_take_lost(m, lost, sizeof lost) != 0;
    if (rc) return errmsg_set(err, errlen, "%s", j->err);
    if (was_lost) return errmsg_set(err, errlen, "%s", lost);
    return 0;
}

/* Refuses text that is not JSON (args, returns): the log prints it as JSON. */
static int check_json(const char *text, const char *what, char *err, size_t errlen)
{
    if (!text) return 0;
    cJSON *v = cJSON_Parse(text);
    if (!v) return errmsg_set(err, errlen, "%s is not valid JSON: %.60s", what, text);
    cJSON_Delete(v);
    return 0;
}

/* Steps a cached statement to completion and resets it. */
static int finish(store_mission *m, sqlite3_stmt *st, const char *what, char *err, size_t errlen)
{
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc != SQLITE_DONE) ret = store_db_error(m->s, what, err, errlen);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

/* Binds the (mission_id, seq, t_ms) that starts every event row. */
static sqlite3_stmt *event_statement(store_mission *m, int which, double t_ms)
{
    sqlite3_stmt *st = m->s->st[which];
    sqlite3_bind_int64(st, 1, m->id);
    sqlite3_bind_int(st, 2, ++m->seq);
    sqlite3_bind_double(st, 3, event_time(m, t_ms));
    return st;
}

/* ---- missions ----------------------------------------------------------- */

/* The world a mission's sightings belong to (see store_mission_begin).
 * FNV-1a: a stable name for the scene's text, not a security measure. */
static void world_name(const store_mission_info *info, char *out, size_t outlen)
{
    if (info->scene_json) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (const unsigned char *p = (const unsigned char *)info->scene_json; *p; p++)
            h = (h ^ *p) * 0x100000001b3ull;
        snprintf(out, outlen, "scene:%016llx", (unsigned long long)h);
    } else {
        snprintf(out, outlen, "%s", info->drone && *info->drone ? info->drone : "default");
    }
}

static int insert_mission(store *s, const store_mission_info *info, int64_t *id, char *err,
                          size_t errlen)
{
    char started[32], owner[160], world[48];
    store_now_iso(started, sizeof started);
    world_name(info, world, sizeof world);
    store_owner_self(s, owner, sizeof owner);
    sqlite3_stmt *st = s->st[STORE_ST_MISSION];
    store_bind_text(st, 1, info->task);
    store_bind_text(st, 2, started);
    store_bind_text(st, 3, info->drone);
    store_bind_text(st, 4, info->model);
    sqlite3_bind_int64(st, 5, info->seed);
    store_bind_text(st, 6, info->scene_json);
    store_bind_text(st, 7, info->params_json);
    if (info->replay_of > 0) sqlite3_bind_int64(st, 8, info->replay_of);
    store_bind_text(st, 9, owner);
    store_bind_text(st, 10, world);
    int ret = 0;
    if (sqlite3_step(st) != SQLITE_DONE)
        ret = store_db_error(s, "cannot record the mission", err, errlen);
    else
        *id = sqlite3_last_insert_rowid(s->db);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

/* The mission becomes visible as running only together with its owner's
 * lock (store_owner.c), or a concurrent open would take it for dead: the
 * lock is taken inside the transaction that inserts it. */
static int begin_job(store *s, store_job *j)
{
    const store_mission_info *info = j->ud;
    if (insert_mission(s, info, &j->result, j->err, sizeof j->err)) return -1;
    if (s->owner_fd >= 0 && store_owner_claim(s, j->result) != 0)
        return errmsg_set(j->err, sizeof j->err, "%s-missions: cannot lock mission %lld", s->path,
                          (long long)j->result);
    return 0;
}

static void begin_undo(store *s, store_job *j)
{
    store_owner_release(s, j->result);
}

store_mission *store_mission_begin(store *s, const store_mission_info *info, char *err,
                                   size_t errlen)
{
    store_mission_info none = {0};
    if (!info) info = &none;
    if (check_json(info->scene_json, "scene", err, errlen) ||
        check_json(info->params_json, "params", err, errlen))
        return NULL;
    store_mission *m = calloc(1, sizeof *m);
    if (!m) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    m->s = s;
    store_job j = {.run = begin_job,
                   .undo = begin_undo,
                   .what = "cannot record the mission",
                   .ud = (void *)info};
    if (store_writer_run(s, &j)) {
        errmsg_set(err, errlen, "%s", j.err);
        free(m);
        return NULL;
    }
    m->id = j.result;
    m->t0_ms = clock_now_ms();
    return m;
}

typedef struct end_args {
    store_mission *m;
    store_status status;
    const char *error, *result_json, *ended;
    double duration;
    bool release;
} end_args;

static int end_job(store *s, store_job *j)
{
    const end_args *a = j->ud;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE missions SET status = ?, ended = ?, duration_ms = ?,"
                           " error = ?, result = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, j->what, j->err, sizeof j->err);
    sqlite3_bind_text(st, 1, store_status_name(a->status), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, a->ended, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, a->duration);
    store_bind_text(st, 4, a->error);
    store_bind_text(st, 5, a->result_json);
    sqlite3_bind_int64(st, 6, a->m->id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, j->what, j->err, sizeof j->err);
    /* The drone is done: now is the time to fold a large WAL into the
     * database (after the commit; PASSIVE: never waits for other missions). */
    if (a->release) s->checkpoint_due = true;
    return 0;
}

/* The mission's end is committed: its lock goes (not before, or another
 * process could see it running and unclaimed, and call it interrupted). */
static void end_after(store *s, store_job *j)
{
    const end_args *a = j->ud;
    if (a->release) store_owner_release(s, a->m->id);
}

/* Writes the mission's end; RELEASE: the mission is done with (owner
 * released, WAL folded). */
static int write_end(store_mission *m, store_status status, const char *error,
                     const char *result_json, bool release, char *err, size_t errlen)
{
    if (status == STORE_RUNNING) return errmsg_set(err, errlen, "a mission cannot end as running");
    if (check_json(result_json, "result", err, errlen)) return -1;
    char ended[32];
    store_now_iso(ended, sizeof ended);
    end_args a = {.m = m,
                  .status = status,
                  .error = error,
                  .result_json = result_json,
                  .ended = ended,
                  .duration = elapsed_ms(m),
                  .release = release};
    store_job j = {.run = end_job, .after = end_after, .what = "cannot end the mission", .ud = &a};
    /* Even when only a record lost before it fails the call, the end is
     * written. */
    return run_waited(m, &j, err, errlen);
}

int store_mission_end(store_mission *m, store_status status, const char *error,
                      const char *result_json, char *err, size_t errlen)
{
    if (!m) return errmsg_set(err, errlen, "no mission");
    int ret = write_end(m, status, error, result_json, true, err, errlen);
    free(m);
    return ret;
}

int store_mission_mark(store_mission *m, store_status status, const char *error, char *err,
                       size_t errlen)
{
    if (!m) return errmsg_set(err, errlen, "no mission");
    return write_end(m, status, error, NULL, false, err, errlen);
}

void store_mission_abandon(store_mission *m)
{
    if (!m) return;
    /* Its records still queued name M: they go first. */
    store_writer_flush(m->s);
    /* The store may stay open (shared by other missions): its lock on the
     * mission goes now, as it would with the store. */
    pthread_mutex_lock(&m->s->lock);
    store_owner_release(m->s, m->id);
    pthread_mutex_unlock(&m->s->lock);
    free(m);
}

/* ---- events ------------------------------------------------------------- */

const char *store_llm_kind_name(store_llm_kind k)
{
    switch (k) {
    case STORE_LLM_PLAN: return "plan";
    case STORE_LLM_RETRY: return "retry";
    case STORE_LLM_REPLAN: return "replan";
    case STORE_LLM_PROBE: return "probe";
    }
    return "?";
}

int store_llm_kind_parse(const char *name)
{
    for (int k = STORE_LLM_PLAN; k <= STORE_LLM_PROBE; k++)
        if (name && strcmp(name, store_llm_kind_name((store_llm_kind)k)) == 0) return k;
    return -1;
}

/* One event of mission M: BIND (on the writer) binds what follows the
 * (mission_id, seq, t_ms) of statement WHICH from the event's arguments. */
typedef struct event_args {
    store_mission *m;
    int which;
    double t_ms; /* already resolved: never negative */
    int (*bind)(sqlite3_stmt *st, const struct event_args *a);
    const void *x;
    int64_t ref;
    int n;
} event_args;

static int event_job(store *s, store_job *j)
{
    event_args *a = j->ud;
    sqlite3_stmt *st = event_statement(a->m, a->which, a->t_ms);
    if (a->bind(st, a)) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        a->m->seq--;
        return errmsg_set(j->err, sizeof j->err, "%s", j->what);
    }
    if (finish(a->m, st, j->what, j->err, sizeof j->err)) {
        a->m->seq--;
        return -1;
    }
    j->result = sqlite3_last_insert_rowid(s->db);
    return 0;
}

/* Records the event of A; its row id into *ID when ID is not NULL. */
static int record_event(event_args *a, const char *what, int64_t *id, char *err, size_t errlen)
{
    a->t_ms = event_time(a->m, a->t_ms);
    store_job j = {.run = event_job, .what = what, .ud = a};
    if (run_waited(a->m, &j, err, errlen)) return -1;
    if (id) *id = j.result;
    return 0;
}

static int bind_llm(sqlite3_stmt *st, const event_args *a)
{
    const store_llm *x = a->x;
    sqlite3_bind_text(st, 4, store_llm_kind_name(x->kind), -1, SQLITE_STATIC);
    store_bind_text(st, 5, x->model);
    sqlite3_bind_text(st, 6, x->prompt ? x->prompt : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, x->response ? x->response : "", -1, SQLITE_STATIC);
    store_bind_opt(st, 8, x->latency_ms);
    store_bind_opt(st, 9, x->ttft_ms);
    if (x->prompt_tokens >= 0) sqlite3_bind_int64(st, 10, x->prompt_tokens);
    if (x->completion_tokens >= 0) sqlite3_bind_int64(st, 11, x->completion_tokens);
    store_bind_text(st, 12, x->error);
    return 0;
}

int64_t store_record_llm(store_mission *m, const store_llm *x, char *err, size_t errlen)
{
    if (x->kind < STORE_LLM_PLAN || x->kind > STORE_LLM_PROBE)
        return errmsg_set(err, errlen, "unknown LLM exchange kind %d", (int)x->kind);
    event_args a = {.m = m, .which = STORE_ST_LLM, .t_ms = x->t_ms, .bind = bind_llm, .x = x};
    int64_t id = -1;
    if (record_event(&a, "cannot record the LLM exchange", &id, err, errlen)) return -1;
    return id;
}

typedef struct plan_args {
    const char *text, *diagnostics;
    bool ok;
} plan_args;

/* The plan's number is the mission's next (on the writer: one at a time). */
static int bind_plan(sqlite3_stmt *st, const event_args *a)
{
    const plan_args *p = a->x;
    sqlite3_bind_int(st, 4, a->m->plans + 1);
    if (a->ref > 0) sqlite3_bind_int64(st, 5, a->ref);
    sqlite3_bind_text(st, 6, p->text ? p->text : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 7, p->ok);
    store_bind_text(st, 8, p->diagnostics);
    return 0;
}

static int plan_job(store *s, store_job *j)
{
    event_args *a = j->ud;
    if (event_job(s, j)) return -1;
    j->result = ++a->m->plans;
    return 0;
}

static void plan_undo(store *s, store_job *j)
{
    (void)s;
    event_args *a = j->ud;
    a->m->plans--;
}

int store_record_plan(store_mission *m, double t_ms, int64_t llm_id, const char *text, bool ok,
                      const char *diagnostics, char *err, size_t errlen)
{
    plan_args p = {.text = text, .diagnostics = diagnostics, .ok = ok};
    event_args a = {.m = m,
                    .which = STORE_ST_PLAN,
                    .t_ms = event_time(m, t_ms),
                    .bind = bind_plan,
                    .x = &p,
                    .ref = llm_id};
    store_job j = {.run = plan_job, .undo = plan_undo, .what = "cannot record the plan", .ud = &a};
    if (run_waited(m, &j, err, errlen)) return -1;
    return (int)j.result;
}

typedef struct text_args {
    const char *text;
    int line, col;
} text_args;

static int bind_statement_text(sqlite3_stmt *st, const event_args *a)
{
    const text_args *t = a->x;
    if (a->ref > 0) sqlite3_bind_int(st, 4, (int)a->ref);
    sqlite3_bind_int(st, 5, t->line);
    sqlite3_bind_int(st, 6, t->col);
    sqlite3_bind_text(st, 7, t->text ? t->text : "", -1, SQLITE_STATIC);
    return 0;
}

int store_record_statement(store_mission *m, double t_ms, int plan_no, int line, int col,
                           const char *text, char *err, size_t errlen)
{
    text_args t = {.text = text, .line = line, .col = col};
    event_args a = {.m = m,
                    .which = STORE_ST_STATEMENT,
                    .t_ms = t_ms,
                    .bind = bind_statement_text,
                    .x = &t,
                    .ref = plan_no};
    return record_event(&a, "cannot record the statement", NULL, err, errlen);
}

typedef struct call_args {
    const char *skill, *args_json;
    int depth;
} call_args;

static int bind_call(sqlite3_stmt *st, const event_args *a)
{
    const call_args *c = a->x;
    sqlite3_bind_text(st, 4, c->skill, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, c->args_json ? c->args_json : "[]", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, c->depth);
    return 0;
}

int64_t store_call_begin(store_mission *m, double t_ms, const char *skill, const char *args_json,
                         int depth, char *err, size_t errlen)
{
    if (!skill || !*skill) return errmsg_set(err, errlen, "a skill call needs a skill name");
    if (check_json(args_json, "skill arguments", err, errlen)) return -1;
    call_args c = {.skill = skill, .args_json = args_json, .depth = depth};
    event_args a = {.m = m, .which = STORE_ST_CALL_BEGIN, .t_ms = t_ms, .bind = bind_call, .x = &c};
    int64_t id = -1;
    if (record_event(&a, "cannot record the skill call", &id, err, errlen)) return -1;
    return id;
}

typedef struct call_end_args {
    store_mission *m;
    int64_t call_id;
    const store_call_result *r;
} call_end_args;

static int call_end_job(store *s, store_job *j)
{
    const call_end_args *a = j->ud;
    const store_call_result *r = a->r;
    sqlite3_stmt *st = s->st[STORE_ST_CALL_END];
    sqlite3_bind_text(st, 1, r->ret_json ? r->ret_json : "null", -1, SQLITE_STATIC);
    if (r->has_pose) {
        sqlite3_bind_double(st, 2, r->x);
        sqlite3_bind_double(st, 3, r->y);
        sqlite3_bind_double(st, 4, r->z);
        sqlite3_bind_double(st, 5, r->yaw);
    }
    store_bind_opt(st, 6, r->sim_ms);
    store_bind_opt(st, 7, r->wall_ms);
    sqlite3_bind_int64(st, 8, a->call_id);
    sqlite3_bind_int64(st, 9, a->m->id);
    if (finish(a->m, st, j->what, j->err, sizeof j->err)) return -1;
    if (sqlite3_changes(s->db) != 1)
        return errmsg_set(j->err, sizeof j->err, "no skill call %lld in mission %lld",
                          (long long)a->call_id, (long long)a->m->id);
    return 0;
}

int store_call_end(store_mission *m, int64_t call_id, const store_call_result *r, char *err,
                   size_t errlen)
{
    if (check_json(r->ret_json, "skill result", err, errlen)) return -1;
    call_end_args a = {.m = m, .call_id = call_id, .r = r};
    store_job j = {.run = call_end_job, .what = "cannot record the skill result", .ud = &a};
    return run_waited(m, &j, err, errlen);
}

typedef struct violation_args {
    const char *skill, *args_json, *reason;
} violation_args;

static int bind_violation(sqlite3_stmt *st, const event_args *a)
{
    const violation_args *v = a->x;
    sqlite3_bind_text(st, 4, v->skill ? v->skill : "", -1, SQLITE_STATIC);
    store_bind_text(st, 5, v->args_json);
    sqlite3_bind_text(st, 6, v->reason ? v->reason : "", -1, SQLITE_STATIC);
    return 0;
}

int store_record_violation(store_mission *m, double t_ms, const char *skill, const char *args_json,
                           const char *reason, char *err, size_t errlen)
{
    if (check_json(args_json, "violation arguments", err, errlen)) return -1;
    violation_args v = {.skill = skill, .args_json = args_json, .reason = reason};
    event_args a = {
        .m = m, .which = STORE_ST_VIOLATION, .t_ms = t_ms, .bind = bind_violation, .x = &v};
    return record_event(&a, "cannot record the violation", NULL, err, errlen);
}

typedef struct scene_args {
    const char *description;
    bool has_pose;
    double x, y, z, yaw;
} scene_args;

static int bind_scene(sqlite3_stmt *st, const event_args *a)
{
    const scene_args *v = a->x;
    sqlite3_bind_text(st, 4, v->description ? v->description : "", -1, SQLITE_STATIC);
    if (v->has_pose) {
        sqlite3_bind_double(st, 5, v->x);
        sqlite3_bind_double(st, 6, v->y);
        sqlite3_bind_double(st, 7, v->z);
        sqlite3_bind_double(st, 8, v->yaw);
    }
    return 0;
}

/* A scene handed over without waiting: nothing waits for it, and the
 * mission's next record that waits (its LLM request's exchange, a skill
 * call before the drone acts) is queued after it. */
typedef struct posted_scene {
    store_job job; /* first: the job is the record */
    event_args a;
    scene_args v;
    char text[];
} posted_scene;

static void posted_done(store_job *j)
{
    posted_scene *p = (posted_scene *)j;
    if (j->rc) store_mission_lose(p->a.m, j->err);
    free(p);
}

int store_record_scene(store_mission *m, double t_ms, const char *description, bool has_pose,
                       double x, double y, double z, double yaw, char *err, size_t errlen)
{
    size_t len = description ? strlen(description) + 1 : 1;
    posted_scene *p = calloc(1, sizeof *p + len);
    if (!p) return errmsg_set(err, errlen, "cannot record the scene: out of memory");
    memcpy(p->text, description ? description : "", len);
    p->v = (scene_args){
        .description = p->text, .has_pose = has_pose, .x = x, .y = y, .z = z, .yaw = yaw};
    p->a = (event_args){.m = m,
                        .which = STORE_ST_SCENE,
                        .t_ms = event_time(m, t_ms),
                        .bind = bind_scene,
                        .x = &p->v};
    p->job = (store_job){
        .run = event_job, .done = posted_done, .what = "cannot record the scene", .ud = &p->a};
    store_writer_post(m->s, &p->job);
    return 0;
}
