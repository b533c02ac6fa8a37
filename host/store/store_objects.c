/*
 * The memory of objects seen, merged across missions: a sighting of a class
 * near a remembered object of that class in the same world (scene file or
 * real drone, see store_mission_begin) is the same object seen again (its
 * position becomes the mean of its sightings); otherwise it is a new one.
 * Two scene files share coordinates but not objects.
 * The lookup and the write share one IMMEDIATE transaction so that two
 * missions seeing the same apple at once do not both create it.
 */
#include "store/store_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t merge_locked(store_mission *m, const char *cls, double x, double y, double z,
                            double conf, const char *now, char *err, size_t errlen)
{
    store *s = m->s;
    sqlite3_stmt *q;
    const double r2 = STORE_OBJECT_MERGE_CM * STORE_OBJECT_MERGE_CM;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, sightings, x, y, z FROM objects WHERE class = ?1"
                           " AND world = (SELECT world FROM missions WHERE id = ?6)"
                           " AND (x - ?2) * (x - ?2) + (y - ?3) * (y - ?3) + (z - ?4) * (z - ?4)"
                           "  <= ?5"
                           " ORDER BY (x - ?2) * (x - ?2) + (y - ?3) * (y - ?3) +"
                           "  (z - ?4) * (z - ?4) LIMIT 1",
                           -1, &q, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read objects", err, errlen);
    sqlite3_bind_text(q, 1, cls, -1, SQLITE_STATIC);
    sqlite3_bind_double(q, 2, x);
    sqlite3_bind_double(q, 3, y);
    sqlite3_bind_double(q, 4, z);
    sqlite3_bind_double(q, 5, r2);
    sqlite3_bind_int64(q, 6, m->id);
    int rc = sqlite3_step(q);
    int64_t id = 0, n = 0;
    double ox = 0, oy = 0, oz = 0;
    if (rc == SQLITE_ROW) {
        id = sqlite3_column_int64(q, 0);
        n = sqlite3_column_int64(q, 1);
        ox = sqlite3_column_double(q, 2);
        oy = sqlite3_column_double(q, 3);
        oz = sqlite3_column_double(q, 4);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_db_error(s, "cannot read objects", err, errlen);

    sqlite3_stmt *w;
    const char *sql = id ? "UPDATE objects SET x = ?1, y = ?2, z = ?3, conf = max(conf, ?4),"
                           " sightings = sightings + 1, last_seen = ?5, last_mission = ?6"
                           " WHERE id = ?7"
                         : "INSERT INTO objects(x, y, z, conf, last_seen, last_mission, class,"
                           " sightings, first_seen, world) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1,"
                           " ?5, (SELECT world FROM missions WHERE id = ?6))";
    if (sqlite3_prepare_v2(s->db, sql, -1, &w, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot record the object", err, errlen);
    if (id) {
        /* Running mean over all sightings. */
        double k = 1.0 / (double)(n + 1);
        x = ox + (x - ox) * k;
        y = oy + (y - oy) * k;
        z = oz + (z - oz) * k;
    }
    sqlite3_bind_double(w, 1, x);
    sqlite3_bind_double(w, 2, y);
    sqlite3_bind_double(w, 3, z);
    sqlite3_bind_double(w, 4, conf);
    sqlite3_bind_text(w, 5, now, -1, SQLITE_STATIC);
    sqlite3_bind_int64(w, 6, m->id);
    if (id)
        sqlite3_bind_int64(w, 7, id);
    else
        sqlite3_bind_text(w, 7, cls, -1, SQLITE_STATIC);
    rc = sqlite3_step(w);
    sqlite3_finalize(w);
    if (rc != SQLITE_DONE) return store_db_error(s, "cannot record the object", err, errlen);
    return id ? id : sqlite3_last_insert_rowid(s->db);
}

int64_t store_record_object(store_mission *m, const char *cls, double x, double y, double z,
                            double conf, char *err, size_t errlen)
{
    if (!cls || !*cls) return errmsg_set(err, errlen, "an object needs a class");
    char now[32];
    store_now_iso(now, sizeof now);
    store *s = m->s;
    pthread_mutex_lock(&s->lock);
    int64_t id = -1;
    if (store_exec(s, "BEGIN IMMEDIATE", err, errlen) == 0) {
        id = merge_locked(m, cls, x, y, z, conf, now, err, errlen);
        if (id > 0 && store_exec(s, "COMMIT", err, errlen) != 0) id = -1;
        if (id <= 0) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    pthread_mutex_unlock(&s->lock);
    return id;
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
