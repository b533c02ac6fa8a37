/*
 * Reading missions back as the JSON of `aloft log` (SPEC §2). The readable
 * timeline of `aloft log ID` is printed from this same document, so there
 * is one query path for both.
 */
#include "store/store_impl.h"

#include <stdio.h>
#include <string.h>

/* Adds column I under NAME with its SQL type: NULL, number or string. */
static void add_column(cJSON *obj, const char *name, sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: cJSON_AddNullToObject(obj, name); break;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: cJSON_AddNumberToObject(obj, name, sqlite3_column_double(st, i)); break;
    default: cJSON_AddStringToObject(obj, name, (const char *)sqlite3_column_text(st, i)); break;
    }
}

/* Adds column I, which holds JSON text, as the JSON value itself. Text that
 * does not parse (never written by this store) is kept as a string. */
static void add_json_column(cJSON *obj, const char *name, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        cJSON_AddNullToObject(obj, name);
        return;
    }
    const char *text = (const char *)sqlite3_column_text(st, i);
    cJSON *v = cJSON_Parse(text);
    cJSON_AddItemToObject(obj, name, v ? v : cJSON_CreateString(text));
}

static void add_bool_column(cJSON *obj, const char *name, sqlite3_stmt *st, int i)
{
    cJSON_AddBoolToObject(obj, name, sqlite3_column_int(st, i) != 0);
}

/* Adds "pose":{x,y,z,yaw} from columns I..I+3 if they were recorded. */
static void add_pose(cJSON *obj, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return;
    cJSON *p = cJSON_AddObjectToObject(obj, "pose");
    add_column(p, "x", st, i);
    add_column(p, "y", st, i + 1);
    add_column(p, "z", st, i + 2);
    add_column(p, "yaw", st, i + 3);
}

/* How a column of a row reads into its document. */
typedef enum column_kind {
    COL_VALUE, /* add_column */
    COL_BOOL,  /* add_bool_column */
    COL_JSON,  /* add_json_column */
} column_kind;

typedef struct column {
    const char *name;
    column_kind kind;
} column;

#define NCOLS(cols) ((int)(sizeof cols / sizeof cols[0]))

/* Columns 0..N-1 of ST as an object, under the names and kinds of COLS. */
static cJSON *row_object(sqlite3_stmt *st, const column *cols, int n)
{
    cJSON *obj = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        if (cols[i].kind == COL_BOOL)
            add_bool_column(obj, cols[i].name, st, i);
        else if (cols[i].kind == COL_JSON)
            add_json_column(obj, cols[i].name, st, i);
        else
            add_column(obj, cols[i].name, st, i);
    }
    return obj;
}

static sqlite3_stmt *prepare(store *s, const char *sql, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        store_db_error(s, "cannot read missions", err, errlen);
        return NULL;
    }
    return st;
}

/* Steps ST to the end, calling ROW for each row into OUT. */
static int each_row(store *s, sqlite3_stmt *st, cJSON *out, void (*row)(cJSON *, sqlite3_stmt *),
                    char *err, size_t errlen)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        row(out, st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, "cannot read missions", err, errlen);
    return 0;
}

/* ---- the list ------------------------------------------------------------ */

static void list_row(cJSON *list, sqlite3_stmt *st)
{
    static const column cols[] = {
        {"id", COL_VALUE},      {"task", COL_VALUE},        {"status", COL_VALUE},
        {"started", COL_VALUE}, {"duration_ms", COL_VALUE},
    };
    cJSON_AddItemToArray(list, row_object(st, cols, NCOLS(cols)));
}

cJSON *store_list_json(store *s, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->lock);
    cJSON *list = cJSON_CreateArray();
    sqlite3_stmt *st = prepare(
        s, "SELECT id, task, status, started, duration_ms FROM missions ORDER BY id", err, errlen);
    if (!st || each_row(s, st, list, list_row, err, errlen)) {
        cJSON_Delete(list);
        list = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    return list;
}

/* ---- one mission --------------------------------------------------------- */

static const char mission_sql[] =
    "SELECT id, task, status, started, ended, duration_ms, drone, model, seed, replay_of,"
    " error, result, params, scene FROM missions WHERE id = ?";

static void mission_row(cJSON *doc, sqlite3_stmt *st)
{
    static const column cols[] = {
        {"id", COL_VALUE},        {"task", COL_VALUE},  {"status", COL_VALUE},
        {"started", COL_VALUE},   {"ended", COL_VALUE}, {"duration_ms", COL_VALUE},
        {"drone", COL_VALUE},     {"model", COL_VALUE}, {"seed", COL_VALUE},
        {"replay_of", COL_VALUE}, {"error", COL_VALUE}, {"result", COL_JSON},
        {"params", COL_JSON},     {"scene", COL_JSON},
    };
    cJSON_AddItemToObject(doc, "mission", row_object(st, cols, NCOLS(cols)));
}

static void plan_row(cJSON *plans, sqlite3_stmt *st)
{
    cJSON_AddItemToArray(plans, cJSON_CreateString((const char *)sqlite3_column_text(st, 0)));
}

/*
 * The timeline: every event table as one stream ordered by seq, with the
 * columns of SPEC §2 (t_ms, kind, skill, args, ret) first and per-kind
 * details after: a, b, c, text, pose (x, y, z, yaw), sim_ms, wall_ms.
 */
static const char events_sql[] =
    "SELECT seq, t_ms, 'call', skill, args, ret, depth, done, NULL, NULL,"
    "  x, y, z, yaw, sim_ms, wall_ms FROM skill_calls WHERE mission_id = ?1"
    " UNION ALL SELECT seq, t_ms, 'statement', NULL, NULL, NULL, plan_no, line, col, text,"
    "  NULL, NULL, NULL, NULL, NULL, NULL FROM statements WHERE mission_id = ?1"
    " UNION ALL SELECT seq, t_ms, 'violation', skill, args, NULL, NULL, NULL, NULL, reason,"
    "  NULL, NULL, NULL, NULL, NULL, NULL FROM violations WHERE mission_id = ?1"
    " UNION ALL SELECT seq, t_ms, 'scene', NULL, NULL, NULL, NULL, NULL, NULL, description,"
    "  x, y, z, yaw, NULL, NULL FROM scene_snapshots WHERE mission_id = ?1"
    " UNION ALL SELECT seq, t_ms, 'plan', NULL, NULL, NULL, plan_no, ok, llm_id, diagnostics,"
    "  NULL, NULL, NULL, NULL, NULL, NULL FROM plans WHERE mission_id = ?1"
    " ORDER BY 1";

static void event_row(cJSON *events, sqlite3_stmt *st)
{
    cJSON *e = cJSON_CreateObject();
    const char *kind = (const char *)sqlite3_column_text(st, 2);
    add_column(e, "t_ms", st, 1);
    add_column(e, "kind", st, 2);
    add_column(e, "skill", st, 3);
    add_json_column(e, "args", st, 4);
    add_json_column(e, "ret", st, 5);
    if (strcmp(kind, "call") == 0) {
        add_column(e, "depth", st, 6);
        add_bool_column(e, "done", st, 7);
        add_pose(e, st, 10);
        add_column(e, "sim_ms", st, 14);
        add_column(e, "wall_ms", st, 15);
    } else if (strcmp(kind, "statement") == 0) {
        add_column(e, "plan", st, 6);
        add_column(e, "line", st, 7);
        add_column(e, "col", st, 8);
        add_column(e, "text", st, 9);
    } else if (strcmp(kind, "violation") == 0) {
        add_column(e, "reason", st, 9);
    } else if (strcmp(kind, "scene") == 0) {
        add_column(e, "description", st, 9);
        add_pose(e, st, 10);
    } else if (strcmp(kind, "plan") == 0) {
        add_column(e, "plan", st, 6);
        add_bool_column(e, "ok", st, 7);
        add_column(e, "diagnostics", st, 9);
    }
    cJSON_AddItemToArray(events, e);
}

static void llm_row(cJSON *calls, sqlite3_stmt *st)
{
    static const column cols[] = {
        {"kind", COL_VALUE},          {"latency_ms", COL_VALUE},
        {"prompt_tokens", COL_VALUE}, {"completion_tokens", COL_VALUE},
        {"t_ms", COL_VALUE},          {"ttft_ms", COL_VALUE},
        {"model", COL_VALUE},         {"error", COL_VALUE},
        {"prompt", COL_VALUE},        {"response", COL_VALUE},
    };
    cJSON_AddItemToArray(calls, row_object(st, cols, NCOLS(cols)));
}

static void candidate_row(cJSON *out, sqlite3_stmt *st)
{
    static const column cols[] = {
        {"round", COL_VALUE},   {"index", COL_VALUE},       {"text", COL_VALUE},
        {"accepted", COL_BOOL}, {"diagnostics", COL_VALUE}, {"verify_failed", COL_VALUE},
        {"tokens", COL_VALUE},  {"chosen", COL_BOOL},
    };
    cJSON_AddItemToArray(out, row_object(st, cols, NCOLS(cols)));
}

typedef struct mission_query {
    int64_t id;
    cJSON *doc;
} mission_query;

static int mission_parts(store *s, void *ud, char *err, size_t errlen)
{
    int64_t id = ((mission_query *)ud)->id;
    cJSON *doc = ((mission_query *)ud)->doc;
    sqlite3_stmt *st = prepare(s, mission_sql, err, errlen);
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, id);
    if (each_row(s, st, doc, mission_row, err, errlen)) return -1;
    if (!cJSON_GetObjectItem(doc, "mission"))
        return errmsg_set(err, errlen, "no mission %lld in %s", (long long)id, s->path);

    struct {
        const char *name, *sql;
        void (*row)(cJSON *, sqlite3_stmt *);
    } parts[] = {
        {"plans", "SELECT text FROM plans WHERE mission_id = ?1 ORDER BY plan_no", plan_row},
        {"events", events_sql, event_row},
        {"llm_calls",
         "SELECT kind, latency_ms, prompt_tokens, completion_tokens, t_ms, ttft_ms, model,"
         " error, prompt, response FROM llm_exchanges WHERE mission_id = ?1 ORDER BY seq",
         llm_row},
        {"candidates",
         "SELECT round, idx, text, accepted, diagnostics, verify_failed, tokens, chosen"
         " FROM candidates WHERE mission_id = ?1 ORDER BY seq",
         candidate_row},
    };
    for (int i = 0; i < (int)(sizeof parts / sizeof parts[0]); i++) {
        cJSON *arr = cJSON_AddArrayToObject(doc, parts[i].name);
        if (!(st = prepare(s, parts[i].sql, err, errlen))) return -1;
        sqlite3_bind_int64(st, 1, id);
        if (each_row(s, st, arr, parts[i].row, err, errlen)) return -1;
    }
    return 0;
}

cJSON *store_mission_json(store *s, int64_t id, char *err, size_t errlen)
{
    mission_query q = {id, cJSON_CreateObject()};
    if (store_read(s, mission_parts, &q, err, errlen)) {
        cJSON_Delete(q.doc);
        return NULL;
    }
    return q.doc;
}

/* ---- what a --plan mission flew ------------------------------------------ */

#define LABEL_STATEMENT_MAX 60

/* The first statement of PLAN into OUT: up to the first ';' or line break
 * outside braces and quotes, cut at LABEL_STATEMENT_MAX bytes with "...".
 * A plan's text is whatever a user's file held, so the cut never splits a
 * UTF-8 character. */
static void first_statement(const char *plan, char *out, size_t outlen)
{
    while (*plan == ' ' || *plan == '\t' || *plan == '\n' || *plan == '\r')
        plan++;
    int depth = 0;
    char quote = 0;
    size_t n = 0;
    for (; plan[n]; n++) {
        char c = plan[n];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && depth > 0) {
            depth--;
        } else if ((c == ';' && depth == 0) || c == '\n' || c == '\r') {
            break;
        }
    }
    while (n > 0 && (plan[n - 1] == ' ' || plan[n - 1] == '\t'))
        n--;
    bool cut = n > LABEL_STATEMENT_MAX;
    if (cut) {
        n = LABEL_STATEMENT_MAX;
        while (n > 0 && ((unsigned char)plan[n] & 0xC0) == 0x80)
            n--;
    }
    snprintf(out, outlen, "%.*s%s", (int)n, plan, cut ? "..." : "");
}

typedef struct label_query {
    int64_t id;
    char *out;
    size_t outlen;
} label_query;

static int label_parts(store *s, void *ud, char *err, size_t errlen)
{
    label_query *q = ud;
    sqlite3_stmt *st = prepare(s,
                               "SELECT json_extract(CASE WHEN json_valid(params) THEN params END,"
                               " '$.plan_file'),"
                               " (SELECT text FROM plans WHERE mission_id = ?1 ORDER BY plan_no"
                               "  LIMIT 1)"
                               " FROM missions WHERE id = ?1",
                               err, errlen);
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, q->id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *file = (const char *)sqlite3_column_text(st, 0);
        const char *plan = (const char *)sqlite3_column_text(st, 1);
        char first[LABEL_STATEMENT_MAX + 8] = "";
        if (plan) first_statement(plan, first, sizeof first);
        if (!first[0]) snprintf(first, sizeof first, "(empty)");
        snprintf(q->out, q->outlen, "%s%s%s", file ? file : "", file ? ": " : "", first);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return errmsg_set(err, errlen, "no mission %lld in %s", (long long)q->id, s->path);
    if (rc != SQLITE_ROW) return store_db_error(s, "cannot read missions", err, errlen);
    return 0;
}

int store_plan_label(store *s, int64_t id, char *out, size_t outlen, char *err, size_t errlen)
{
    label_query q = {id, out, outlen};
    return store_read(s, label_parts, &q, err, errlen);
}
