/*
 * The store's schema and its migrations.
 *
 * The version lives in PRAGMA user_version and the file is marked as ours by
 * PRAGMA application_id, so that store_open can tell an aloft database from
 * any other SQLite file. migrations[i] takes a database from version i to
 * i + 1; a new version appends one entry and never edits an old one, so any
 * older database reaches the current schema by running the tail of the list.
 *
 * Every event table carries (mission_id, seq, t_ms): seq numbers the
 * mission's events across all tables, which is the order of the timeline
 * that `aloft log` shows; t_ms is milliseconds since the mission started.
 */
#include "store/store_impl.h"

#include <stdio.h>
#include <string.h>

/* "ALFT": the application_id of an aloft database. */
#define STORE_APPLICATION_ID 0x414c4654

/* The missions table as NAME, with the status values STATUSES and the
 * columns EXTRA after result (", world TEXT"). The first schema creates it,
 * and the migrations that add a status rebuild it with this same text (a
 * CHECK cannot be altered in place). Its text is part of the migrations
 * already run on users' databases: never edit it, add a parameter. */
#define MISSIONS_TABLE(name, statuses, extra)                                                      \
    "CREATE TABLE " name "("                                                                       \
    " id INTEGER PRIMARY KEY,"                                                                     \
    " task TEXT,"                                                                                  \
    " status TEXT NOT NULL DEFAULT 'running'"                                                      \
    "  CHECK(status IN (" statuses ")),"                                                           \
    " started TEXT NOT NULL," /* ISO-8601 UTC */                                                   \
    " ended TEXT,"            /* ISO-8601 UTC, NULL while running */                               \
    " duration_ms REAL,"      /* NULL while running */                                             \
    " drone TEXT, model TEXT, seed INTEGER,"                                                       \
    " scene TEXT,"  /* the scene file's JSON, for replay */                                        \
    " params TEXT," /* run options, JSON object */                                                 \
    " replay_of INTEGER REFERENCES missions(id),"                                                  \
    " owner TEXT," /* process that writes it (store.c) */                                          \
    " error TEXT,"                                                                                 \
    " result TEXT" /* the plan's return value, JSON */                                             \
        extra ");"

#define MISSIONS_RUNNING_INDEX                                                                     \
    "CREATE INDEX missions_running ON missions(status) WHERE status = 'running';"

/* Rebuilds missions as NAME (then renamed back) with STATUSES and EXTRA:
 * same columns in the same order, and the other tables' references follow
 * its name. */
#define MISSIONS_REBUILD(name, statuses, extra)                                                    \
    MISSIONS_TABLE(name, statuses, extra)                                                          \
    "INSERT INTO " name " SELECT * FROM missions;"                                                 \
    "DROP TABLE missions;"                                                                         \
    "ALTER TABLE " name " RENAME TO missions;" MISSIONS_RUNNING_INDEX

#define STATUSES_V1 "'running','ok','failed','cancelled','interrupted'"

static const char *const migrations[] = {
    /* 0 -> 1: the first schema. */
    MISSIONS_TABLE("missions", STATUSES_V1, "") MISSIONS_RUNNING_INDEX

    "CREATE TABLE llm_exchanges("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " kind TEXT NOT NULL CHECK(kind IN ('plan','retry','replan','probe')),"
    " model TEXT, prompt TEXT NOT NULL, response TEXT NOT NULL,"
    " latency_ms REAL, ttft_ms REAL, prompt_tokens INTEGER, completion_tokens INTEGER,"
    " error TEXT,"
    " UNIQUE(mission_id, seq));"

    "CREATE TABLE plans("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " plan_no INTEGER NOT NULL,"
    " llm_id INTEGER REFERENCES llm_exchanges(id)," /* NULL for a user's plan */
    " text TEXT NOT NULL, ok INTEGER NOT NULL, diagnostics TEXT,"
    " UNIQUE(mission_id, seq), UNIQUE(mission_id, plan_no));"

    "CREATE TABLE statements("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " plan_no INTEGER, line INTEGER, col INTEGER, text TEXT NOT NULL,"
    " UNIQUE(mission_id, seq));"

    /* A call is inserted when it starts (done = 0) and completed in place,
     * so a killed mission shows the action that was under way. */
    "CREATE TABLE skill_calls("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " skill TEXT NOT NULL, args TEXT NOT NULL, depth INTEGER NOT NULL DEFAULT 0,"
    " done INTEGER NOT NULL DEFAULT 0, ret TEXT,"
    " x REAL, y REAL, z REAL, yaw REAL," /* pose after the call */
    " sim_ms REAL, wall_ms REAL,"
    " UNIQUE(mission_id, seq));"

    "CREATE TABLE violations("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " skill TEXT NOT NULL, args TEXT, reason TEXT NOT NULL,"
    " UNIQUE(mission_id, seq));"

    "CREATE TABLE scene_snapshots("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " description TEXT NOT NULL, x REAL, y REAL, z REAL, yaw REAL,"
    " UNIQUE(mission_id, seq));"

    /* Objects seen, merged across missions (store_objects.c). */
    "CREATE TABLE objects("
    " id INTEGER PRIMARY KEY,"
    " class TEXT NOT NULL,"
    " x REAL NOT NULL, y REAL NOT NULL, z REAL NOT NULL,"
    " conf REAL NOT NULL, sightings INTEGER NOT NULL,"
    " first_seen TEXT NOT NULL, last_seen TEXT NOT NULL,"
    " last_mission INTEGER REFERENCES missions(id));"
    "CREATE INDEX objects_class ON objects(class);",

    /* 1 -> 2: status 'hung' (a mission the watchdog ended, SPEC §6). A CHECK
     * cannot be altered in place: the table is rebuilt, same columns in the
     * same order, and the other tables' references follow its name. */
    MISSIONS_REBUILD("missions_v2", STATUSES_V1 ",'hung'", ""),

    /* 2 -> 3: a world per scene file (or per real drone), SPEC §12: objects
     * seen in one world are never merged with another's. The world of
     * missions and objects recorded before is unknown (NULL): they stay
     * listed, and no new sighting merges into them. */
    "ALTER TABLE missions ADD COLUMN world TEXT;"
    "ALTER TABLE objects ADD COLUMN world TEXT;"
    "CREATE INDEX objects_world_class ON objects(world, class);",

    /* 3 -> 4: the candidate plans of `run --candidates K` (SPEC §7): every
     * reply of a round, accepted or not, with the checker's diagnostics,
     * the sampled worlds it failed in verification (NULL: not verified),
     * its tokens and whether it was the one flown. The plan flown is also
     * in plans, as before, so older readers of plans see the same. */
    "CREATE TABLE candidates("
    " id INTEGER PRIMARY KEY,"
    " mission_id INTEGER NOT NULL REFERENCES missions(id),"
    " seq INTEGER NOT NULL, t_ms REAL NOT NULL,"
    " llm_id INTEGER REFERENCES llm_exchanges(id),"
    " round INTEGER NOT NULL, idx INTEGER NOT NULL,"
    " text TEXT NOT NULL, accepted INTEGER NOT NULL, diagnostics TEXT,"
    " verify_failed INTEGER, tokens INTEGER, chosen INTEGER NOT NULL,"
    " UNIQUE(mission_id, seq));",
    /* 4 -> 5: a spatial index of the remembered objects (SPEC §12), so that
     * a sighting looks at the objects near it, not at every one of its
     * class: SQLite's R*Tree, one point box per object. Triggers keep it
     * in step with every write to objects (a merge moves an object). */
    "CREATE VIRTUAL TABLE objects_at USING rtree(id, x0, x1, y0, y1, z0, z1);"
    "INSERT INTO objects_at SELECT id, x, x, y, y, z, z FROM objects;"
    "CREATE TRIGGER objects_at_insert AFTER INSERT ON objects BEGIN"
    " INSERT INTO objects_at VALUES (new.id, new.x, new.x, new.y, new.y, new.z, new.z); END;"
    "CREATE TRIGGER objects_at_move AFTER UPDATE OF id, x, y, z ON objects BEGIN"
    " DELETE FROM objects_at WHERE id = old.id;"
    " INSERT INTO objects_at VALUES (new.id, new.x, new.x, new.y, new.y, new.z, new.z); END;"
    "CREATE TRIGGER objects_at_delete AFTER DELETE ON objects BEGIN"
    " DELETE FROM objects_at WHERE id = old.id; END;",
    /* 5 -> 6: status 'crashed' (a mission whose worker process died, SPEC
     * §6). Rebuilt as for 'hung' (1 -> 2), with the column world of 2 -> 3. */
    MISSIONS_REBUILD("missions_v6", STATUSES_V1 ",'hung','crashed'", ", world TEXT"),
};

#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

_Static_assert(N_MIGRATIONS == STORE_SCHEMA_VERSION, "one migration per schema version");

static int pragma_int(store *s, const char *sql, int64_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read the schema", err, errlen);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_db_error(s, "cannot read the schema", err, errlen);
    return 0;
}

/* What the file is: its schema VERSION, or an error if it is another
 * program's database or a newer aloft's. */
static int identify(store *s, int64_t *version, char *err, size_t errlen)
{
    /* One statement, so one snapshot: a process creating the schema at the
     * same moment is seen either not at all or complete. */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT (SELECT user_version FROM pragma_user_version),"
                           " (SELECT application_id FROM pragma_application_id),"
                           " (SELECT count(*) FROM sqlite_master)",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read the schema", err, errlen);
    int rc = sqlite3_step(st);
    int64_t app_id = 0, n_tables = 0;
    if (rc == SQLITE_ROW) {
        *version = sqlite3_column_int64(st, 0);
        app_id = sqlite3_column_int64(st, 1);
        n_tables = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_db_error(s, "cannot read the schema", err, errlen);
    bool fresh = *version == 0 && app_id == 0 && n_tables == 0;
    if (!fresh && app_id != STORE_APPLICATION_ID)
        return errmsg_set(err, errlen, "%s: not an aloft database (it holds other data)", s->path);
    if (*version > STORE_SCHEMA_VERSION)
        return errmsg_set(err, errlen,
                          "%s: written by a newer aloft (schema version %lld; this "
                          "build reads up to %d); upgrade aloft or use another --db",
                          s->path, (long long)*version, STORE_SCHEMA_VERSION);
    return 0;
}

int store_schema_check(store *s, char *err, size_t errlen)
{
    int64_t version = 0;
    return identify(s, &version, err, errlen);
}

/* Under the write lock: bring the schema up to date. */
static int migrate_locked(store *s, char *err, size_t errlen)
{
    int64_t version = 0;
    if (identify(s, &version, err, errlen)) return -1;
    for (int v = (int)version; v < N_MIGRATIONS; v++) {
        char what[64];
        snprintf(what, sizeof what, "schema migration %d -> %d", v, v + 1);
        if (sqlite3_exec(s->db, migrations[v], NULL, NULL, NULL) != SQLITE_OK)
            return store_db_error(s, what, err, errlen);
    }
    if (version < STORE_SCHEMA_VERSION) {
        char sql[96];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 STORE_APPLICATION_ID, STORE_SCHEMA_VERSION);
        if (store_exec(s, sql, err, errlen)) return -1;
    }
    return 0;
}

int store_schema_migrate(store *s, char *err, size_t errlen)
{
    /* The common case needs no write lock: store_schema_check has read the
     * version already, and a database at ours needs nothing. */
    int64_t version = -1, app_id = -1;
    if (pragma_int(s, "PRAGMA user_version", &version, err, errlen) ||
        pragma_int(s, "PRAGMA application_id", &app_id, err, errlen))
        return -1;
    if (version == STORE_SCHEMA_VERSION && app_id == STORE_APPLICATION_ID) return 0;

    /* IMMEDIATE so that two processes creating the same file serialise here
     * and the second one sees the first one's schema. */
    if (store_exec(s, "BEGIN IMMEDIATE", err, errlen)) return -1;
    if (migrate_locked(s, err, errlen)) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return store_exec(s, "COMMIT", err, errlen);
}
