/*
 * The memory of objects seen, merged across missions: a sighting of a class
 * near a remembered object of that class in the same world (scene file or
 * real drone, see store_mission_begin) is the same object seen again (its
 * position becomes the mean of its sightings); otherwise it is a new one.
 * Two scene files share coordinates but not objects.
 * The lookup and the write share one job of the store's writer (one
 * transaction at a time) so that two missions seeing the same apple at once
 * do not both create it. The lookup
 * goes through the R*Tree objects_at (schema version 4) and its statements
 * are prepared once per store: a sighting costs the same with 20 or 20,000
 * remembered objects (tests/bench/bench_store.c measures it).
 */
#include "store/store_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps ST (a cached statement) once and resets it for the next use.
 * Returns SQLITE_ROW (the row's id, sightings and x, y, z copied to ID, N
 * and POS when ID is not NULL), SQLITE_DONE or an error code. */
static int step_once(sqlite3_stmt *st, int64_t *id, int64_t *n, double pos[3])
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && id) {
        *id = sqlite3_column_int64(st, 0);
        *n = sqlite3_column_int64(st, 1);
        for (int i = 0; i < 3; i++)
            pos[i] = sqlite3_column_double(st, 2 + i);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* The nearest remembered object of class CLS in M's world within the merge
 * distance of P: its id (0 if none), sightings and position. */
static int find_near(store_mission *m, const char *cls, const double p[3], int64_t *id, int64_t *n,
                     double at[3], char *err, size_t errlen)
{
    sqlite3_stmt *q = m->s->st[STORE_ST_OBJ_FIND];
    sqlite3_bind_text(q, 1, cls, -1, SQLITE_STATIC);
    for (int i = 0; i < 3; i++)
        sqlite3_bind_double(q, 2 + i, p[i]);
    sqlite3_bind_double(q, 5, STORE_OBJECT_MERGE_CM);
    sqlite3_bind_double(q, 6, STORE_OBJECT_MERGE_CM * STORE_OBJECT_MERGE_CM);
    sqlite3_bind_int64(q, 7, m->id);
    *id = 0;
    int rc = step_once(q, id, n, at);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_db_error(m->s, "cannot read objects", err, errlen);
    return 0;
}

static int64_t merge_locked(store_mission *m, const char *cls, double x, double y, double z,
                            double conf, const char *now, char *err, size_t errlen)
{
    store *s = m->s;
    double p[3] = {x, y, z}, at[3] = {0, 0, 0};
    int64_t id, n = 0;
    if (find_near(m, cls, p, &id, &n, at, err, errlen)) return -1;
    if (id) {
        /* Running mean over all sightings. */
        double k = 1.0 / (double)(n + 1);
        for (int i = 0; i < 3; i++)
            p[i] = at[i] + (p[i] - at[i]) * k;
    }
    sqlite3_stmt *w = s->st[id ? STORE_ST_OBJ_MERGE : STORE_ST_OBJ_NEW];
    for (int i = 0; i < 3; i++)
        sqlite3_bind_double(w, 1 + i, p[i]);
    sqlite3_bind_double(w, 4, conf);
    sqlite3_bind_text(w, 5, now, -1, SQLITE_STATIC);
    sqlite3_bind_int64(w, 6, m->id);
    if (id)
        sqlite3_bind_int64(w, 7, id);
    else
        sqlite3_bind_text(w, 7, cls, -1, SQLITE_STATIC);
    if (step_once(w, NULL, NULL, NULL) != SQLITE_DONE)
        return store_db_error(s, "cannot record the object", err, errlen);
    return id ? id : sqlite3_last_insert_rowid(s->db);
}

/* A sighting the store can index, or -1 with a message. */
static int check_sighting(const char *cls, double x, double y, double z, char *err, size_t errlen)
{
    if (!cls || !*cls) return errmsg_set(err, errlen, "an object needs a class");
    /* The spatial index keeps 32-bit floats: a position beyond their range
     * (or not a number) would be indexed where no sighting finds it. */
    if (!(fabs(x) <= STORE_OBJECT_MAX_CM && fabs(y) <= STORE_OBJECT_MAX_CM &&
          fabs(z) <= STORE_OBJECT_MAX_CM))
        return errmsg_set(err, errlen, "object position (%g, %g, %g) is not within %g cm", x, y, z,
                          STORE_OBJECT_MAX_CM);
    return 0;
}

typedef struct sightings_args {
    store_mission *m;
    const store_sighting *v;
    int n;
    const char *now;
} sightings_args;

/* On the writer, in the job's savepoint: a refused sighting undoes the
 * view's others. RESULT: the last sighting's object. */
static int sightings_job(store *s, store_job *j)
{
    (void)s;
    const sightings_args *a = j->ud;
    for (int i = 0; i < a->n; i++) {
        const store_sighting *v = &a->v[i];
        j->result =
            merge_locked(a->m, v->cls, v->x, v->y, v->z, v->conf, a->now, j->err, sizeof j->err);
        if (j->result <= 0) return -1;
    }
    return 0;
}

static int64_t record_sightings(store_mission *m, const store_sighting *v, int n, char *err,
                                size_t errlen)
{
    char now[32];
    store_now_iso(now, sizeof now);
    sightings_args a = {.m = m, .v = v, .n = n, .now = now};
    store_job j = {.run = sightings_job, .what = "cannot record the object", .ud = &a};
    if (store_writer_run(m->s, &j)) return errmsg_set(err, errlen, "%s", j.err);
    return j.result;
}

int64_t store_record_object(store_mission *m, const char *cls, double x, double y, double z,
                            double conf, char *err, size_t errlen)
{
    if (check_sighting(cls, x, y, z, err, errlen)) return -1;
    store_sighting v = {.cls = cls, .x = x, .y = y, .z = z, .conf = conf};
    return record_sightings(m, &v, 1, err, errlen);
}

/* A view handed to the writer without waiting: its sightings and the
 * copies of their classes. */
typedef struct posted_view {
    store_job job; /* first: the job is the record */
    sightings_args a;
    char now[32];
    store_sighting v[];
} posted_view;

static void view_done(store_job *j)
{
    posted_view *p = (posted_view *)j;
    if (j->rc) store_mission_lose(p->a.m, j->err);
    free(p);
}

/* A view's sightings need no answer: they are handed over, and like a
 * scene (store_record.c) they are on disk before the mission's next record
 * that waits; a failure is reported by that record. */
int store_record_objects(store_mission *m, const store_sighting *v, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (check_sighting(v[i].cls, v[i].x, v[i].y, v[i].z, err, errlen)) return -1;
    if (n <= 0) return 0;
    size_t names = 0;
    for (int i = 0; i < n; i++)
        names += strlen(v[i].cls) + 1;
    posted_view *p = calloc(1, sizeof *p + (size_t)n * sizeof *v + names);
    if (!p) return errmsg_set(err, errlen, "cannot record the objects: out of memory");
    char *name = (char *)&p->v[n];
    for (int i = 0; i < n; i++) {
        size_t len = strlen(v[i].cls) + 1;
        p->v[i] = v[i];
        p->v[i].cls = memcpy(name, v[i].cls, len);
        name += len;
    }
    store_now_iso(p->now, sizeof p->now);
    p->a = (sightings_args){.m = m, .v = p->v, .n = n, .now = p->now};
    p->job = (store_job){
        .run = sightings_job, .done = view_done, .what = "cannot record the object", .ud = &p->a};
    store_writer_post(m->s, &p->job);
    return 0;
}

void store_object_row(sqlite3_stmt *q, store_object *o)
{
    o->id = sqlite3_column_int64(q, 0);
    snprintf(o->cls, sizeof o->cls, "%s", (const char *)sqlite3_column_text(q, 1));
    o->x = sqlite3_column_double(q, 2);
    o->y = sqlite3_column_double(q, 3);
    o->z = sqlite3_column_double(q, 4);
    o->conf = sqlite3_column_double(q, 5);
    o->sightings = sqlite3_column_int64(q, 6);
    snprintf(o->first_seen, sizeof o->first_seen, "%s", (const char *)sqlite3_column_text(q, 7));
    snprintf(o->last_seen, sizeof o->last_seen, "%s", (const char *)sqlite3_column_text(q, 8));
    o->last_mission = sqlite3_column_int64(q, 9);
    snprintf(o->world, sizeof o->world, "%s", (const char *)sqlite3_column_text(q, 10));
}

int store_objects(store *s, const char *cls, store_object *out, int max, char *err, size_t errlen)
{
    store_writer_flush(s); /* the views handed over are remembered */
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *q;
    int n = -1;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, class, x, y, z, conf, sightings, first_seen, last_seen,"
                           " coalesce(last_mission, 0), coalesce(world, '') FROM objects"
                           " WHERE ?1 IS NULL OR class = ?1 ORDER BY last_seen DESC, id DESC",
                           -1, &q, NULL) != SQLITE_OK) {
        store_db_error(s, "cannot read objects", err, errlen);
    } else {
        store_bind_text(q, 1, cls);
        int rc = SQLITE_DONE;
        n = 0;
        while (n < max && (rc = sqlite3_step(q)) == SQLITE_ROW) {
            store_object_row(q, &out[n++]);
        }
        if (n < max && rc != SQLITE_DONE) n = store_db_error(s, "cannot read objects", err, errlen);
        sqlite3_finalize(q);
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

cJSON *store_objects_json(store *s, char *err, size_t errlen)
{
    /* Counted first so that the whole memory fits in one call. */
    int max = 64, n;
    store_object *objs = NULL;
    for (;;) {
        store_object *grown = realloc(objs, (size_t)max * sizeof *objs);
        if (!grown) {
            free(objs);
            errmsg_set(err, errlen, "out of memory");
            return NULL;
        }
        objs = grown;
        n = store_objects(s, NULL, objs, max, err, errlen);
        if (n < max) break;
        max *= 2;
    }
    cJSON *list = NULL;
    if (n >= 0) {
        list = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            const store_object *o = &objs[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddNumberToObject(j, "id", (double)o->id);
            cJSON_AddStringToObject(j, "class", o->cls);
            cJSON_AddNumberToObject(j, "x", o->x);
            cJSON_AddNumberToObject(j, "y", o->y);
            cJSON_AddNumberToObject(j, "z", o->z);
            cJSON_AddNumberToObject(j, "conf", o->conf);
            cJSON_AddNumberToObject(j, "sightings", (double)o->sightings);
            cJSON_AddStringToObject(j, "first_seen", o->first_seen);
            cJSON_AddStringToObject(j, "last_seen", o->last_seen);
            if (o->last_mission)
                cJSON_AddNumberToObject(j, "last_mission", (double)o->last_mission);
            else
                cJSON_AddNullToObject(j, "last_mission");
            if (o->world[0])
                cJSON_AddStringToObject(j, "world", o->world);
            else
                cJSON_AddNullToObject(j, "world");
            cJSON_AddItemToArray(list, j);
        }
    }
    free(objs);
    return list;
}
