/*
 * Recording a mission as it happens. Every function here is one committed
 * write (autocommit: one statement, one transaction), so each event is on
 * disk before the caller lets the drone do anything else, and a concurrent
 * writer never waits behind more than one short statement.
 */
#include "store/store_impl.h"

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

/* Refuses text that is not JSON (args, returns): the log prints it as JSON. */
static int check_json(const char *text, const char *what, char *err, size_t errlen)
{
    if (!text) return 0;
    cJSON *v = cJSON_Parse(text);
    if (!v) return errmsg_set(err, errlen, "%s is not valid JSON: %.60s", what, text);
    cJSON_Delete(v);
    return 0;
}

/* Steps a cached statement to completion, resets it, and unlocks. */
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
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO missions(task, started, drone, model, seed, scene,"
                           " params, replay_of, owner, world) VALUES (?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot record the mission", err, errlen);
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
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, "cannot record the mission", err, errlen);
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
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
    /* The mission becomes visible as running only together with its owner's
     * lock (store_owner.c), or a concurrent open would take it for dead. */
    pthread_mutex_lock(&s->lock);
    int ret = store_exec(s, "BEGIN IMMEDIATE", err, errlen);
    if (ret == 0) {
        bool claimed = false;
        ret = insert_mission(s, info, &m->id, err, errlen);
        if (ret == 0 && s->owner_fd >= 0) {
            claimed = store_owner_claim(s, m->id) == 0;
            if (!claimed)
                ret = errmsg_set(err, errlen, "%s-missions: cannot lock mission %lld", s->path,
                                 (long long)m->id);
        }
        if (ret == 0) ret = store_exec(s, "COMMIT", err, errlen);
        if (ret) {
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            if (claimed) store_owner_release(s, m->id);
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (ret) {
        free(m);
        return NULL;
    }
    m->t0_ms = clock_now_ms();
    return m;
}

/* Writes the mission's end; RELEASE: the mission is done with (owner
 * released, WAL folded). */
static int write_end(store_mission *m, store_status status, const char *error,
                     const char *result_json, bool release, char *err, size_t errlen)
{
    int ret = -1;
    if (status == STORE_RUNNING) {
        errmsg_set(err, errlen, "a mission cannot end as running");
    } else if (check_json(result_json, "result", err, errlen) == 0) {
        store *s = m->s;
        char ended[32];
        store_now_iso(ended, sizeof ended);
        double duration = elapsed_ms(m);
        pthread_mutex_lock(&s->lock);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db,
                               "UPDATE missions SET status = ?, ended = ?, duration_ms = ?,"
                               " error = ?, result = ? WHERE id = ?",
                               -1, &st, NULL) != SQLITE_OK) {
            store_db_error(s, "cannot end the mission", err, errlen);
        } else {
            sqlite3_bind_text(st, 1, store_status_name(status), -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, ended, -1, SQLITE_STATIC);
            sqlite3_bind_double(st, 3, duration);
            store_bind_text(st, 4, error);
            store_bind_text(st, 5, result_json);
            sqlite3_bind_int64(st, 6, m->id);
            if (sqlite3_step(st) == SQLITE_DONE)
                ret = 0;
            else
                store_db_error(s, "cannot end the mission", err, errlen);
            sqlite3_finalize(st);
        }
        /* The drone is done: now is the time to fold a large WAL into the
         * database (PASSIVE: never waits for other missions). */
        if (ret == 0 && release) {
            store_owner_release(s, m->id);
            if (s->wal_frames >= STORE_WAL_END_PAGES)
                sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        }
        pthread_mutex_unlock(&s->lock);
    }
    return ret;
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

int64_t store_record_llm(store_mission *m, const store_llm *x, char *err, size_t errlen)
{
    if (x->kind < STORE_LLM_PLAN || x->kind > STORE_LLM_PROBE)
        return errmsg_set(err, errlen, "unknown LLM exchange kind %d", (int)x->kind);
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = event_statement(m, STORE_ST_LLM, x->t_ms);
    sqlite3_bind_text(st, 4, store_llm_kind_name(x->kind), -1, SQLITE_STATIC);
    store_bind_text(st, 5, x->model);
    sqlite3_bind_text(st, 6, x->prompt ? x->prompt : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, x->response ? x->response : "", -1, SQLITE_STATIC);
    store_bind_opt(st, 8, x->latency_ms);
    store_bind_opt(st, 9, x->ttft_ms);
    if (x->prompt_tokens >= 0) sqlite3_bind_int64(st, 10, x->prompt_tokens);
    if (x->completion_tokens >= 0) sqlite3_bind_int64(st, 11, x->completion_tokens);
    store_bind_text(st, 12, x->error);
    int64_t id = -1;
    if (finish(m, st, "cannot record the LLM exchange", err, errlen) == 0)
        id = sqlite3_last_insert_rowid(m->s->db);
    pthread_mutex_unlock(&m->s->lock);
    return id;
}

int store_record_plan(store_mission *m, double t_ms, int64_t llm_id, const char *text, bool ok,
                      const char *diagnostics, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = event_statement(m, STORE_ST_PLAN, t_ms);
    int plan_no = m->plans + 1;
    sqlite3_bind_int(st, 4, plan_no);
    if (llm_id > 0) sqlite3_bind_int64(st, 5, llm_id);
    sqlite3_bind_text(st, 6, text ? text : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 7, ok);
    store_bind_text(st, 8, diagnostics);
    int ret = finish(m, st, "cannot record the plan", err, errlen);
    if (ret == 0) ret = m->plans = plan_no;
    pthread_mutex_unlock(&m->s->lock);
    return ret;
}

int store_record_statement(store_mission *m, double t_ms, int plan_no, int line, int col,
                           const char *text, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = event_statement(m, STORE_ST_STATEMENT, t_ms);
    if (plan_no > 0) sqlite3_bind_int(st, 4, plan_no);
    sqlite3_bind_int(st, 5, line);
    sqlite3_bind_int(st, 6, col);
    sqlite3_bind_text(st, 7, text ? text : "", -1, SQLITE_STATIC);
    int ret = finish(m, st, "cannot record the statement", err, errlen);
    pthread_mutex_unlock(&m->s->lock);
    return ret;
}

int64_t store_call_begin(store_mission *m, double t_ms, const char *skill, const char *args_json,
                         int depth, char *err, size_t errlen)
{
    if (!skill || !*skill) return errmsg_set(err, errlen, "a skill call needs a skill name");
    if (check_json(args_json, "skill arguments", err, errlen)) return -1;
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = event_statement(m, STORE_ST_CALL_BEGIN, t_ms);
    sqlite3_bind_text(st, 4, skill, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, args_json ? args_json : "[]", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, depth);
    int64_t id = -1;
    if (finish(m, st, "cannot record the skill call", err, errlen) == 0)
        id = sqlite3_last_insert_rowid(m->s->db);
    pthread_mutex_unlock(&m->s->lock);
    return id;
}

int store_call_end(store_mission *m, int64_t call_id, const store_call_result *r, char *err,
                   size_t errlen)
{
    if (check_json(r->ret_json, "skill result", err, errlen)) return -1;
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = m->s->st[STORE_ST_CALL_END];
    sqlite3_bind_text(st, 1, r->ret_json ? r->ret_json : "null", -1, SQLITE_STATIC);
    if (r->has_pose) {
        sqlite3_bind_double(st, 2, r->x);
        sqlite3_bind_double(st, 3, r->y);
        sqlite3_bind_double(st, 4, r->z);
        sqlite3_bind_double(st, 5, r->yaw);
    }
    store_bind_opt(st, 6, r->sim_ms);
    store_bind_opt(st, 7, r->wall_ms);
    sqlite3_bind_int64(st, 8, call_id);
    sqlite3_bind_int64(st, 9, m->id);
    int ret = finish(m, st, "cannot record the skill result", err, errlen);
    if (ret == 0 && sqlite3_changes(m->s->db) != 1)
        ret = errmsg_set(err, errlen, "no skill call %lld in mission %lld", (long long)call_id,
                         (long long)m->id);
    pthread_mutex_unlock(&m->s->lock);
    return ret;
}

int store_record_violation(store_mission *m, double t_ms, const char *skill, const char *args_json,
                           const char *reason, char *err, size_t errlen)
{
    if (check_json(args_json, "violation arguments", err, errlen)) return -1;
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = event_statement(m, STORE_ST_VIOLATION, t_ms);
    sqlite3_bind_text(st, 4, skill ? skill : "", -1, SQLITE_STATIC);
    store_bind_text(st, 5, args_json);
    sqlite3_bind_text(st, 6, reason ? reason : "", -1, SQLITE_STATIC);
    int ret = finish(m, st, "cannot record the violation", err, errlen);
    pthread_mutex_unlock(&m->s->lock);
    return ret;
}

int store_record_scene(store_mission *m, double t_ms, const char *description, bool has_pose,
                       double x, double y, double z, double yaw, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->s->lock);
    sqlite3_stmt *st = event_statement(m, STORE_ST_SCENE, t_ms);
    sqlite3_bind_text(st, 4, description ? description : "", -1, SQLITE_STATIC);
    if (has_pose) {
        sqlite3_bind_double(st, 5, x);
        sqlite3_bind_double(st, 6, y);
        sqlite3_bind_double(st, 7, z);
        sqlite3_bind_double(st, 8, yaw);
    }
    int ret = finish(m, st, "cannot record the scene", err, errlen);
    pthread_mutex_unlock(&m->s->lock);
    return ret;
}
