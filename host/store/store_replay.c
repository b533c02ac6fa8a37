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
} replay_reply;

struct store_replay {
    int64_t mission;
    char *task, *scene;
    int64_t seed;
    replay_reply *replies;
    int n, next;
};

static char *dup_column(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? strdup(t) : NULL;
}

static int load(store *s, void *ud, char *err, size_t errlen)
{
    store_replay *r = ud;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT task, scene, seed FROM missions WHERE id = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read the mission", err, errlen);
    sqlite3_bind_int64(st, 1, r->mission);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r->task = dup_column(st, 0);
        r->scene = dup_column(st, 1);
        r->seed = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return store_set_error(err, errlen, "no mission %lld in %s", (long long)r->mission,
                               s->path);
    if (rc != SQLITE_ROW) return store_db_error(s, "cannot read the mission", err, errlen);

    if (sqlite3_prepare_v2(s->db,
                           "SELECT kind, response FROM llm_exchanges WHERE mission_id = ?"
                           " ORDER BY seq",
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
                return store_set_error(err, errlen, "out of memory");
            }
            r->replies = grown;
        }
        replay_reply *rep = &r->replies[r->n++];
        rep->kind = (store_llm_kind)store_llm_kind_parse((const char *)sqlite3_column_text(st, 0));
        rep->text = dup_column(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, "cannot read LLM replies", err, errlen);
    return 0;
}

store_replay *store_replay_open(store *s, int64_t id, char *err, size_t errlen)
{
    store_replay *r = calloc(1, sizeof *r);
    if (!r) {
        store_set_error(err, errlen, "out of memory");
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

const char *store_replay_next(store_replay *r, store_llm_kind kind, char *err, size_t errlen)
{
    if (r->next >= r->n) {
        store_set_error(err, errlen,
                        "replay diverged: a %s request after all %d recorded replies of "
                        "mission %lld were used",
                        store_llm_kind_name(kind), r->n, (long long)r->mission);
        return NULL;
    }
    replay_reply *rep = &r->replies[r->next];
    if (rep->kind != kind) {
        store_set_error(err, errlen,
                        "replay diverged: LLM request %d of mission %lld was a %s request, "
                        "now it is a %s request",
                        r->next + 1, (long long)r->mission, store_llm_kind_name(rep->kind),
                        store_llm_kind_name(kind));
        return NULL;
    }
    r->next++;
    return rep->text ? rep->text : "";
}

void store_replay_free(store_replay *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++)
        free(r->replies[i].text);
    free(r->replies);
    free(r->task);
    free(r->scene);
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

typedef struct compare_query {
    int64_t a, b;
} compare_query;

static int compare(store *s, void *ud, char *why, size_t whylen)
{
    int64_t a = ((compare_query *)ud)->a, b = ((compare_query *)ud)->b;
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
            if (c == 0 ? strcmp(va, vb) != 0 : !same_json(va, vb)) {
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
    compare_query q = {a, b};
    return store_read(s, compare, &q, why, whylen);
}
