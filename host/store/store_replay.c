/*
 * Replay: a recorded mission re-flown in the simulator answers its LLM
 * requests from the recorded replies instead of calling an LLM. The replies
 * are handed out strictly in recorded order, and a request of another kind
 * than the recorded one means the re-flight has taken a different path,
 * which is reported rather than papered over.
 */
#include "store/store_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct replay_reply {
    store_llm_kind kind;
    char *text;
    char *error; /* how the exchange failed, or NULL */
} replay_reply;

struct store_replay {
    int64_t mission;
    char *task, *scene, *params, *model;
    int64_t seed;
    char **plans; /* the plans as received, in order */
    int nplans;
    replay_reply *replies;
    int n, next;
    char diverged[512]; /* why the replay left the record, once it did */
};

static char *dup_column(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? strdup(t) : NULL;
}

static int load_plans(store *s, store_replay *r, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT text FROM plans WHERE mission_id = ? ORDER BY plan_no",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read the plans", err, errlen);
    sqlite3_bind_int64(st, 1, r->mission);
    int rc, cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->nplans == cap) {
            cap = cap ? cap * 2 : 4;
            char **grown = realloc(r->plans, (size_t)cap * sizeof *grown);
            if (!grown) {
                sqlite3_finalize(st);
                return errmsg_set(err, errlen, "out of memory");
            }
            r->plans = grown;
        }
        r->plans[r->nplans++] = dup_column(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, "cannot read the plans", err, errlen);
    return 0;
}

static int load(store *s, void *ud, char *err, size_t errlen)
{
    store_replay *r = ud;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT task, scene, seed, params, model FROM missions WHERE id = ?", -1,
                           &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read the mission", err, errlen);
    sqlite3_bind_int64(st, 1, r->mission);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r->task = dup_column(st, 0);
        r->scene = dup_column(st, 1);
        r->seed = sqlite3_column_int64(st, 2);
        r->params = dup_column(st, 3);
        r->model = dup_column(st, 4);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return errmsg_set(err, errlen, "no mission %lld in %s", (long long)r->mission, s->path);
    if (rc != SQLITE_ROW) return store_db_error(s, "cannot read the mission", err, errlen);

    if (sqlite3_prepare_v2(s->db,
                           "SELECT kind, response, error FROM llm_exchanges"
                           " WHERE mission_id = ? ORDER BY t_ms, seq",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read LLM replies", err, errlen);
    sqlite3_bind_int64(st, 1, r->mission);
    int cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->n == cap) {
            cap = cap ? cap * 2 : 8;
            replay_reply *grown = realloc(r->replies, (size_t)cap * sizeof *grown);
            if (!grown) {
                sqlite3_finalize(st);
                return errmsg_set(err, errlen, "out of memory");
            }
            r->replies = grown;
        }
        replay_reply *rep = &r->replies[r->n++];
        rep->kind = (store_llm_kind)store_llm_kind_parse((const char *)sqlite3_column_text(st, 0));
        rep->text = dup_column(st, 1);
        rep->error = dup_column(st, 2);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, "cannot read LLM replies", err, errlen);
    return load_plans(s, r, err, errlen);
}

store_replay *store_replay_open(store *s, int64_t id, char *err, size_t errlen)
{
    store_replay *r = calloc(1, sizeof *r);
    if (!r) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    r->mission = id;
    if (store_read(s, load, r, err, errlen)) {
        store_replay_free(r);
        return NULL;
    }
    return r;
}

int store_replay_count(const store_replay *r)
{
    return r->n;
}

const char *store_replay_task(const store_replay *r)
{
    return r->task;
}

const char *store_replay_scene(const store_replay *r)
{
    return r->scene;
}

int64_t store_replay_seed(const store_replay *r)
{
    return r->seed;
}

const char *store_replay_params(const store_replay *r)
{
    return r->params;
}

const char *store_replay_model(const store_replay *r)
{
    return r->model;
}

int store_replay_plans(const store_replay *r)
{
    return r->nplans;
}

const char *store_replay_plan(const store_replay *r, int i)
{
    return i >= 0 && i < r->nplans && r->plans[i] ? r->plans[i] : NULL;
}

int64_t store_replay_mission(const store_replay *r)
{
    return r->mission;
}

/* The divergence message into ERR; NULL. */
static const char *diverged(const store_replay *r, char *err, size_t errlen)
{
    errmsg_set(err, errlen, "%s", r->diverged);
    return NULL;
}

const char *store_replay_next(store_replay *r, store_llm_kind kind, char *err, size_t errlen)
{
    if (r->diverged[0]) return diverged(r, err, errlen);
    if (r->next >= r->n) {
        snprintf(r->diverged, sizeof r->diverged,
                 "replay diverged: a %s request after all %d recorded replies of "
                 "mission %lld were used",
                 store_llm_kind_name(kind), r->n, (long long)r->mission);
        return diverged(r, err, errlen);
    }
    replay_reply *rep = &r->replies[r->next];
    if (rep->kind != kind) {
        snprintf(r->diverged, sizeof r->diverged,
                 "replay diverged: LLM request %d of mission %lld was a %s request, "
                 "now it is a %s request",
                 r->next + 1, (long long)r->mission, store_llm_kind_name(rep->kind),
                 store_llm_kind_name(kind));
        return diverged(r, err, errlen);
    }
    r->next++;
    return rep->text ? rep->text : "";
}

const char *store_replay_error(const store_replay *r)
{
    return r->next > 0 ? r->replies[r->next - 1].error : NULL;
}

void store_replay_free(store_replay *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        free(r->replies[i].text);
        free(r->replies[i].error);
    }
    free(r->replies);
    for (int i = 0; i < r->nplans; i++)
        free(r->plans[i]);
    free(r->plans);
    free(r->task);
    free(r->scene);
    free(r->params);
    free(r->model);
    free(r);
}

/* ---- comparing two missions' skill calls -------------------------------- */

/* Are two JSON texts the same value? Compared parsed, so "[45]" and "[ 45 ]"
 * match and 45 matches 45.0. */
static bool same_json(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b);
    bool same = ja && jb ? cJSON_Compare(ja, jb, true) : strcmp(a, b) == 0;
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return same;
}

/* Do two JSON texts hold values of the same type? */
static bool same_type(const char *a, const char *b)
{
    cJSON *ja = a ? cJSON_Parse(a) : NULL, *jb = b ? cJSON_Parse(b) : NULL;
    bool same = ja && jb && (ja->type & 0xff) == (jb->type & 0xff);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return same;
}

static bool listed(const char *const *names, const char *name)
{
    for (; names && *names; names++)
        if (strcmp(*names, name) == 0) return true;
    return false;
}

typedef struct compare_query {
    int64_t a, b;
    const char *const *any_result;
} compare_query;

static int compare(store *s, void *ud, char *why, size_t whylen)
{
    int64_t a = ((compare_query *)ud)->a, b = ((compare_query *)ud)->b;
    const char *const *any_result = ((compare_query *)ud)->any_result;
    sqlite3_stmt *qa, *qb;
    static const char sql[] =
        "SELECT skill, args, ret FROM skill_calls WHERE mission_id = ? ORDER BY seq";
    if (sqlite3_prepare_v2(s->db, sql, -1, &qa, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read skill calls", why, whylen);
    if (sqlite3_prepare_v2(s->db, sql, -1, &qb, NULL) != SQLITE_OK) {
        sqlite3_finalize(qa);
        return store_db_error(s, "cannot read skill calls", why, whylen);
    }
    sqlite3_bind_int64(qa, 1, a);
    sqlite3_bind_int64(qb, 1, b);
    int result = 1;
    for (int i = 1; result == 1; i++) {
        int ra = sqlite3_step(qa), rb = sqlite3_step(qb);
        if (ra == SQLITE_DONE && rb == SQLITE_DONE) break;
        if ((ra != SQLITE_ROW && ra != SQLITE_DONE) || (rb != SQLITE_ROW && rb != SQLITE_DONE)) {
            result = store_db_error(s, "cannot read skill calls", why, whylen);
            break;
        }
        if (ra != rb) {
            snprintf(why, whylen, "mission %lld made %d skill calls, mission %lld more",
                     (long long)(ra == SQLITE_DONE ? a : b), i - 1,
                     (long long)(ra == SQLITE_DONE ? b : a));
            result = 0;
            break;
        }
        const char *sa = (const char *)sqlite3_column_text(qa, 0);
        const char *sb = (const char *)sqlite3_column_text(qb, 0);
        for (int c = 0; c < 3 && result == 1; c++) {
            const char *va = (const char *)sqlite3_column_text(qa, c);
            const char *vb = (const char *)sqlite3_column_text(qb, c);
            bool same = c == 0                             ? strcmp(va, vb) == 0
                        : c == 2 && listed(any_result, sa) ? same_type(va, vb)
                                                           : same_json(va, vb);
            if (!same) {
                snprintf(why, whylen, "call %d differs: %s%s -> %s vs %s%s -> %s", i, sa,
                         sqlite3_column_text(qa, 1), va && c == 2 ? va : "...", sb,
                         sqlite3_column_text(qb, 1), vb && c == 2 ? vb : "...");
                result = 0;
            }
        }
    }
    sqlite3_finalize(qa);
    sqlite3_finalize(qb);
    return result;
}

int store_calls_match(store *s, int64_t a, int64_t b, char *why, size_t whylen)
{
    return store_calls_match_except(s, a, b, NULL, why, whylen);
}

int store_calls_match_except(store *s, int64_t a, int64_t b, const char *const *any_result,
                             char *why, size_t whylen)
{
    compare_query q = {a, b, any_result};
    return store_read(s, compare, &q, why, whylen);
}
