/*
 * Opening and closing the mission store: where the file lives, how SQLite is
 * set up, and the sweep that marks missions of dead processes interrupted.
 *
 * Durability choice: WAL with synchronous=NORMAL. Every event is its own
 * committed transaction; a commit appends to the WAL with write(2), so once
 * store_record_* returns the event is in the kernel's page cache and no kill
 * of the process (SIGKILL, abort, a crash in a skill) can lose it. Only a
 * power loss or kernel crash can drop the last commits, and even then the
 * database stays consistent. FULL would add an fsync per event (milliseconds
 * on real disks, see tests/bench/bench_store.c) to every drone action, so it
 * is opt-in (STORE_OPEN_SYNC_FULL) for setups that must survive a power cut.
 */
#include "store/store_impl.h"
#include "store/store_writer.h"

#include "clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a writer waits for another process's transaction. Transactions
 * are one statement long, so this is only reached if something is stuck. */
#define STORE_BUSY_TIMEOUT_MS 10000

/* WAL pages (of 4 KiB) after which a commit checkpoints even in flight. */
#define STORE_WAL_MAX_PAGES 20000

int store_db_error(store *s, const char *what, char *err, size_t errlen)
{
    int code = sqlite3_errcode(s->db) & 0xff;
    const char *msg = sqlite3_errmsg(s->db);
    if (code == SQLITE_NOTADB)
        return errmsg_set(err, errlen, "%s: not an aloft database (not SQLite, or damaged: %s)",
                          s->path, msg);
    if (code == SQLITE_CORRUPT)
        return errmsg_set(err, errlen,
                          "%s: the database is corrupt (%s); move it aside, or try "
                          "'sqlite3 %s .recover'",
                          s->path, msg, s->path);
    return errmsg_set(err, errlen, "%s: %s: %s", s->path, what, msg);
}

int store_exec(store *s, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_db_error(s, "database error", err, errlen);
    return 0;
}

int store_read(store *s, int (*fn)(store *s, void *ud, char *err, size_t errlen), void *ud,
               char *err, size_t errlen)
{
    /* What missions handed over without waiting is part of what they did. */
    store_writer_flush(s);
    pthread_mutex_lock(&s->lock);
    int rc = store_exec(s, "BEGIN", err, errlen);
    if (rc == 0) {
        rc = fn(s, ud, err, errlen);
        sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void store_bind_text(sqlite3_stmt *st, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

void store_bind_opt(sqlite3_stmt *st, int i, double v)
{
    if (v >= 0)
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

void store_now_iso(char *out, size_t outlen)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char date[24];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, outlen, "%s.%03dZ", date, (int)(ts.tv_nsec / 1000000 % 1000));
}

const char *store_status_name(store_status st)
{
    switch (st) {
    case STORE_RUNNING: return "running";
    case STORE_OK: return "ok";
    case STORE_FAILED: return "failed";
    case STORE_CANCELLED: return "cancelled";
    case STORE_INTERRUPTED: return "interrupted";
    case STORE_HUNG: return "hung";
    case STORE_CRASHED: return "crashed";
    }
    return "?";
}

/* ---- path --------------------------------------------------------------- */

int store_resolve_path(const char *override, char *out, size_t outlen, char *err, size_t errlen)
{
    const char *env;
    int n;
    if (override && *override) {
        n = snprintf(out, outlen, "%s", override);
    } else if ((env = getenv("ALOFT_DB")) && *env) {
        n = snprintf(out, outlen, "%s", env);
    } else if ((env = getenv("XDG_DATA_HOME")) && *env == '/') {
        /* The XDG spec says to ignore a relative XDG_DATA_HOME. */
        n = snprintf(out, outlen, "%s/aloft/aloft.db", env);
    } else if ((env = getenv("HOME")) && *env) {
        n = snprintf(out, outlen, "%s/.local/share/aloft/aloft.db", env);
    } else {
        return errmsg_set(err, errlen,
                          "no database path: set --db, ALOFT_DB, XDG_DATA_HOME or HOME");
    }
    if (n < 0 || (size_t)n >= outlen) return errmsg_set(err, errlen, "database path is too long");
    return 0;
}

/* mkdir -p of the directory that will hold PATH. Private (0700): prompts
 * and tasks may be confidential. */
static int make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return errmsg_set(err, errlen, "cannot create directory '%s': %s", dir,
                              strerror(errno));
        *p = c;
        if (!c) break;
    }
    return 0;
}

/* Marks the missions of dead owners interrupted; their duration is the time
 * of their last recorded event. */
static int sweep_interrupted(store *s, char *err, size_t errlen)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, "SELECT id, owner FROM missions WHERE status = 'running'", -1, &q,
                           NULL) != SQLITE_OK)
        return store_db_error(s, "cannot read missions", err, errlen);
    int64_t *dead = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        if (store_owner_alive(s, id, (const char *)sqlite3_column_text(q, 1))) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(dead, (size_t)cap * sizeof *grown);
            if (!grown) break;
            dead = grown;
        }
        dead[n++] = id;
    }
    sqlite3_finalize(q);
    if (n == 0) {
        free(dead);
        return 0;
    }

    static const char sql[] =
        "UPDATE missions SET status = 'interrupted', ended = ?2,"
        " duration_ms = (SELECT max(t) FROM ("
        "  SELECT max(t_ms) AS t FROM llm_exchanges WHERE mission_id = ?1"
        "  UNION ALL SELECT max(t_ms + coalesce(wall_ms, 0)) FROM skill_calls WHERE mission_id = ?1"
        "  UNION ALL SELECT max(t_ms) FROM plans WHERE mission_id = ?1"
        "  UNION ALL SELECT max(t_ms) FROM statements WHERE mission_id = ?1"
        "  UNION ALL SELECT max(t_ms) FROM violations WHERE mission_id = ?1"
        "  UNION ALL SELECT max(t_ms) FROM scene_snapshots WHERE mission_id = ?1)),"
        " error = coalesce(error, 'interrupted: the process ended before the mission did')"
        " WHERE id = ?1 AND status = 'running'";
    sqlite3_stmt *u;
    if (sqlite3_prepare_v2(s->db, sql, -1, &u, NULL) != SQLITE_OK) {
        free(dead);
        return store_db_error(s, "cannot mark interrupted missions", err, errlen);
    }
    char now[32];
    store_now_iso(now, sizeof now);
    int ret = 0;
    for (int i = 0; i < n && ret == 0; i++) {
        sqlite3_bind_int64(u, 1, dead[i]);
        sqlite3_bind_text(u, 2, now, -1, SQLITE_STATIC);
        if (sqlite3_step(u) != SQLITE_DONE)
            ret = store_db_error(s, "cannot mark interrupted missions", err, errlen);
        sqlite3_reset(u);
    }
    sqlite3_finalize(u);
    free(dead);
    return ret;
}

/* ---- open / close --------------------------------------------------------- */

/* Drops the connection, its statements and the lock file. */
static void close_connection(store *s)
{
    for (int i = 0; i < STORE_ST_COUNT; i++) {
        sqlite3_finalize(s->st[i]);
        s->st[i] = NULL;
    }
    sqlite3_close(s->db);
    s->db = NULL;
    store_owner_close(s);
}

static const char *const statement_sql[STORE_ST_COUNT] = {
    [STORE_ST_LLM] = "INSERT INTO llm_exchanges(mission_id, seq, t_ms, kind, model, prompt,"
                     " response, latency_ms, ttft_ms, prompt_tokens, completion_tokens, error)"
                     " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    [STORE_ST_PLAN] = "INSERT INTO plans(mission_id, seq, t_ms, plan_no, llm_id, text, ok,"
                      " diagnostics) VALUES (?,?,?,?,?,?,?,?)",
    [STORE_ST_STATEMENT] = "INSERT INTO statements(mission_id, seq, t_ms, plan_no, line, col,"
                           " text) VALUES (?,?,?,?,?,?,?)",
    [STORE_ST_CALL_BEGIN] = "INSERT INTO skill_calls(mission_id, seq, t_ms, skill, args, depth)"
                            " VALUES (?,?,?,?,?,?)",
    [STORE_ST_CALL_END] = "UPDATE skill_calls SET done = 1, ret = ?, x = ?, y = ?, z = ?,"
                          " yaw = ?, sim_ms = ?, wall_ms = ? WHERE id = ? AND mission_id = ?",
    [STORE_ST_VIOLATION] = "INSERT INTO violations(mission_id, seq, t_ms, skill, args, reason)"
                           " VALUES (?,?,?,?,?,?)",
    [STORE_ST_SCENE] = "INSERT INTO scene_snapshots(mission_id, seq, t_ms, description, x, y,"
                       " z, yaw) VALUES (?,?,?,?,?,?,?,?)",
    /* The spatial index (objects_at) narrows the search to the cube of
     * side 2 R around the sighting (?5 = R, ?6 = R * R); the exact distance
     * and the class and world are then checked on those few rows. CROSS
     * JOIN keeps SQLite's planner from starting at objects_world_class
     * instead, which scans every object of the class. */
    [STORE_ST_OBJ_FIND] =
        "SELECT o.id, o.sightings, o.x, o.y, o.z FROM objects_at a CROSS JOIN objects o"
        " ON o.id = a.id"
        " WHERE a.x1 >= ?2 - ?5 AND a.x0 <= ?2 + ?5 AND a.y1 >= ?3 - ?5 AND a.y0 <= ?3 + ?5"
        " AND a.z1 >= ?4 - ?5 AND a.z0 <= ?4 + ?5"
        " AND o.class = ?1 AND o.world = (SELECT world FROM missions WHERE id = ?7)"
        " AND (o.x - ?2) * (o.x - ?2) + (o.y - ?3) * (o.y - ?3) + (o.z - ?4) * (o.z - ?4) <= ?6"
        " ORDER BY (o.x - ?2) * (o.x - ?2) + (o.y - ?3) * (o.y - ?3) + (o.z - ?4) * (o.z - ?4),"
        " o.id LIMIT 1",
    [STORE_ST_OBJ_MERGE] = "UPDATE objects SET x = ?1, y = ?2, z = ?3, conf = max(conf, ?4),"
                           " sightings = sightings + 1, last_seen = ?5, last_mission = ?6"
                           " WHERE id = ?7",
    [STORE_ST_OBJ_NEW] = "INSERT INTO objects(x, y, z, conf, last_seen, last_mission, class,"
                         " sightings, first_seen, world) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1,"
                         " ?5, (SELECT world FROM missions WHERE id = ?6))",
    [STORE_ST_MISSION] = "INSERT INTO missions(task, started, drone, model, seed, scene,"
                         " params, replay_of, owner, world) VALUES (?,?,?,?,?,?,?,?,?,?)",
    [STORE_ST_RECALL] = "SELECT id, class, x, y, z, conf, sightings, first_seen, last_seen,"
                        " coalesce(last_mission, 0), world," /* store_object_row */
                        " (julianday('now') - julianday(last_seen)) * 86400.0"
                        " FROM objects WHERE world = (SELECT world FROM missions WHERE id = ?1)"
                        " ORDER BY last_seen DESC, id DESC LIMIT ?2",
};

static int wal_hook(void *ud, sqlite3 *db, const char *name, int frames)
{
    store *s = ud;
    s->wal_frames = frames;
    if (frames >= STORE_WAL_MAX_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

static int configure(store *s, int flags, char *err, size_t errlen)
{
    sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(s->db, 1);
    /* Nothing is written (not even the journal mode) to a file that is not
     * ours; one that is not SQLite at all fails here with SQLITE_NOTADB. */
    if (store_schema_check(s, err, errlen)) return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, "cannot open", err, errlen);
    int rc = sqlite3_step(st);
    char mode[16] = "";
    if (rc == SQLITE_ROW)
        snprintf(mode, sizeof mode, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_db_error(s, "cannot open", err, errlen);
    if (strcmp(mode, "wal") != 0 && strcmp(s->path, ":memory:") != 0)
        return errmsg_set(err, errlen,
                          "%s: cannot use write-ahead logging here (journal mode '%s')", s->path,
                          mode);
    if (store_exec(s,
                   (flags & STORE_OPEN_SYNC_FULL) ? "PRAGMA synchronous = FULL"
                                                  : "PRAGMA synchronous = NORMAL",
                   err, errlen))
        return -1;
    /* A checkpoint copies the WAL into the database and syncs it: a pause of
     * milliseconds (and, right after it, slower writes while the disk
     * catches up) that must not fall between two drone actions. So SQLite's
     * automatic checkpoint (every 1000 pages) is replaced: a mission that
     * ends with a large WAL checkpoints then (store_mission_end), and the
     * hook only bounds the WAL of a very long mission. */
    sqlite3_wal_hook(s->db, wal_hook, s);
    if (store_schema_migrate(s, err, errlen)) return -1;
    store_owner_open(s); /* only beside a file known to be ours */
    for (int i = 0; i < STORE_ST_COUNT; i++)
        if (sqlite3_prepare_v3(s->db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL) != SQLITE_OK)
            return store_db_error(s, "cannot prepare", err, errlen);
    return sweep_interrupted(s, err, errlen);
}

store *store_open(const char *path, int flags, char *err, size_t errlen)
{
    store *s = calloc(1, sizeof *s);
    if (!s) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    if (store_resolve_path(path, s->path, sizeof s->path, err, errlen)) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    store_writer_init(s);
    s->owner_fd = -1;
    bool memory = strcmp(s->path, ":memory:") == 0;
    struct stat sb;
    if ((flags & STORE_OPEN_EXISTING) && !memory && stat(s->path, &sb) != 0) {
        errmsg_set(err, errlen, "no mission database at %s (nothing recorded yet?)", s->path);
        store_close(s);
        return NULL;
    }
    if (!(flags & STORE_OPEN_EXISTING) && !memory && make_parent_dirs(s->path, err, errlen)) {
        store_close(s);
        return NULL;
    }
    int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (!(flags & STORE_OPEN_EXISTING)) oflags |= SQLITE_OPEN_CREATE;
    double t0 = clock_now_ms();
    for (int attempt = 0;; attempt++) {
        if (sqlite3_open_v2(s->path, &s->db, oflags, NULL) != SQLITE_OK) {
            if (s->db)
                store_db_error(s, "cannot open", err, errlen);
            else
                errmsg_set(err, errlen, "%s: cannot open: out of memory", s->path);
            store_close(s);
            return NULL;
        }
        if (configure(s, flags, err, errlen) == 0) {
            if (!(flags & STORE_OPEN_EXISTING)) store_writer_start(s);
            return s;
        }
        /* Processes opening a new database at once race for the switch to
         * WAL, and SQLite refuses a lock upgrade that could deadlock without
         * waiting for the busy timeout: start again, for as long as the
         * timeout would have waited. */
        if ((sqlite3_extended_errcode(s->db) & 0xff) != SQLITE_BUSY ||
            clock_now_ms() - t0 > STORE_BUSY_TIMEOUT_MS)
            break;
        close_connection(s);
        usleep((useconds_t)(1000 + (getpid() + attempt * 7919) % 9000));
    }
    store_close(s);
    return NULL;
}

void store_close(store *s)
{
    if (!s) return;
    /* Whatever missions handed to the writer is committed first. */
    store_writer_stop(s);
    close_connection(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

const char *store_path(const store *s)
{
    return s->path;
}
