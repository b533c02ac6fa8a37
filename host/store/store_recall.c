/*
 * Recalling the object memory of a mission's world: what the planning
 * prompt lists as remembered out of view (mission/memory.h). The newest
 * sightings first, so that a world with thousands of remembered objects
 * costs a bounded read: the caller asks for at most MAX.
 */
#include "store/store_impl.h"

#include <stdio.h>

int store_world_objects(store_mission *m, store_object *out, double *age_s, int max, char *err,
                        size_t errlen)
{
    store *s = m->s;
    if (max <= 0) return 0;
    pthread_mutex_lock(&s->lock);
    /* Prepared once per store: every mission's planning prompt asks. */
    sqlite3_stmt *q = s->st[STORE_ST_RECALL];
    sqlite3_bind_int64(q, 1, m->id);
    sqlite3_bind_int(q, 2, max);
    int rc = SQLITE_DONE, n = 0;
    while (n < max && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        store_object_row(q, &out[n]);
        /* A clock set back since the sighting must not make it "in the
         * future". */
        double age = sqlite3_column_double(q, 11);
        age_s[n++] = age > 0 ? age : 0;
    }
    if (n < max && rc != SQLITE_DONE) n = store_db_error(s, "cannot read objects", err, errlen);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    pthread_mutex_unlock(&s->lock);
    return n;
}
