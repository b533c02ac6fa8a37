/*
 * Internals shared by the files of host/store/. Not part of the store's API.
 */
#ifndef ALOFT_STORE_STORE_IMPL_H
#define ALOFT_STORE_STORE_IMPL_H

#include "errmsg.h"
#include "store/store.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <time.h>

/* The statements a mission runs for every event (and every sighting):
 * prepared once per store so that an event costs one step and one commit. */
enum {
    STORE_ST_LLM,
    STORE_ST_PLAN,
    STORE_ST_STATEMENT,
    STORE_ST_CALL_BEGIN,
    STORE_ST_CALL_END,
    STORE_ST_VIOLATION,
    STORE_ST_SCENE,
    STORE_ST_OBJ_FIND,  /* the nearest remembered object of a sighting */
    STORE_ST_OBJ_MERGE, /* a sighting merged into it */
    STORE_ST_OBJ_NEW,   /* or remembered as a new one */
    STORE_ST_MISSION,   /* a mission begins */
    STORE_ST_RECALL,    /* the newest objects of a mission's world */
    STORE_ST_COUNT
};

/* A mission that ends with at least this many WAL pages checkpoints (the
 * threshold SQLite's automatic checkpoint uses). */
#define STORE_WAL_END_PAGES 1000

struct store {
    sqlite3 *db;
    pthread_mutex_t lock;
    sqlite3_stmt *st[STORE_ST_COUNT];
    int owner_fd; /* lock file of running missions, or -1 */
    /* This process's identity (store_owner_self), read from /proc once per
     * process: every mission that begins records it. Under the lock. */
    char self[160];
    pid_t self_pid;
    int wal_frames;              /* WAL size after this connection's last commit */
    bool checkpoint_due;         /* a mission ended: fold a large WAL after the commit */
    struct store_writer *writer; /* runs the writes (store_writer.h) */
    char path[PATH_MAX];
};

struct store_mission {
    store *s;
    int64_t id;
    int seq;      /* last event number used in this mission */
    int plans;    /* last plan number used */
    double t0_ms; /* clock_now_ms() at begin */
    /* A record handed to the writer without waiting (a scene, a view's
     * sightings) that failed: reported by the mission's next record that
     * waits, then forgotten. Under the store's lock. */
    char lost[512];
};

/* Remembers ERR as M's lost record, unless one is remembered already. */
void store_mission_lose(store_mission *m, const char *err);

/* Takes M's lost record's message into ERR (and forgets it): returns -1 if
 * there was one, else 0. */
int store_mission_take_lost(store_mission *m, char *err, size_t errlen);

/* Writes "PATH: WHAT: sqlite's message" to ERR, naming corruption and
 * "not a database" plainly. Returns -1. */
int store_db_error(store *s, const char *what, char *err, size_t errlen);

/* Current UTC time as ISO-8601 with milliseconds ("2026-11-21T23:59:11.123Z")
 * into OUT (at least 32 bytes). */
void store_now_iso(char *out, size_t outlen);

/* Refuses, by reading only, a file that is not an aloft database (another
 * program's SQLite file, a newer aloft's, not SQLite at all): run before
 * anything is written to it. */
int store_schema_check(store *s, char *err, size_t errlen);

/* Creates the schema or migrates it to STORE_SCHEMA_VERSION inside one
 * write transaction; refuses newer or foreign databases. */
int store_schema_migrate(store *s, char *err, size_t errlen);

/* Runs SQL (no results) on the store's connection. */
int store_exec(store *s, const char *sql, char *err, size_t errlen);

/* Runs FN(S, UD, ERR, ERRLEN) under the store's lock inside one read
 * transaction, so that it sees one consistent snapshot while missions go on
 * writing. Returns what FN returns, or -1 if the transaction cannot start. */
int store_read(store *s, int (*fn)(store *s, void *ud, char *err, size_t errlen), void *ud,
               char *err, size_t errlen);

/* Reads the row of Q into O: its columns 0..10 are id, class, x, y, z,
 * conf, sightings, first_seen, last_seen, last_mission (0 for none) and
 * world ('' for none), as store_objects selects them. */
void store_object_row(sqlite3_stmt *q, store_object *o);

/* Binds TEXT or NULL. */
void store_bind_text(sqlite3_stmt *st, int i, const char *text);

/* Binds a double, or NULL when negative (unknown latency/tokens). */
void store_bind_opt(sqlite3_stmt *st, int i, double v);

/* Who is writing a mission (store_owner.c). */

/* Opens the lock file beside the database (S->owner_fd, -1 if impossible). */
void store_owner_open(store *s);
void store_owner_close(store *s);

/* This process's identity for missions.owner. */
void store_owner_self(store *s, char *out, size_t outlen);

/* Takes / drops the lock that says mission ID is being written. Call
 * store_owner_claim inside the transaction that inserts the mission, so that
 * no other process sees it running and unclaimed. */
int store_owner_claim(store *s, int64_t id);
void store_owner_release(store *s, int64_t id);

/* Whether the writer of running mission ID (whose missions.owner is OWNER)
 * is still at it. */
bool store_owner_alive(store *s, int64_t id, const char *owner);

#endif
