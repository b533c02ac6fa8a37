/*
 * The store's writer: one thread per store runs the queued jobs in groups,
 * one transaction per group (see store_writer.h).
 *
 * Why a thread: missions that each took the store's lock and committed
 * their own one-statement transaction queued up behind each other's
 * commits and woke each other one by one; a hundred missions starting
 * together waited up to a second for the store before their first drone
 * action. Now the writer takes the lock once per group, the missions only
 * queue and wait for the group's commit, and readers (store_read) wait for
 * at most one group.
 */
#include "store/store_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store_writer {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t room; /* the queue shrank */
    store_job *head, *tail;
    int queued;
    int posted; /* jobs handed over without waiting and not yet done */
    bool started, stopping, no_thread;
    pthread_t thread;
};

/* ---- one group ---------------------------------------------------------- */

static int exec_quiet(store *s, const char *sql)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* Runs job J in a savepoint of the open transaction: a job that fails
 * leaves nothing behind, and the group goes on. */
static void run_job(store *s, store_job *j)
{
    if (exec_quiet(s, "SAVEPOINT job")) {
        j->rc = store_db_error(s, j->what, j->err, sizeof j->err);
        return;
    }
    j->err[0] = '\0';
    j->rc = j->run(s, j) ? -1 : 0;
    if (j->rc && !sqlite3_get_autocommit(s->db)) exec_quiet(s, "ROLLBACK TO job");
    if (!sqlite3_get_autocommit(s->db)) exec_quiet(s, "RELEASE job");
}

/* The group's transaction is gone (its commit failed, or SQLite rolled it
 * back after an I/O error or a full disk): every job of it failed, with
 * WHY unless it has a message of its own. Jobs from NOT_RUN on never ran. */
static void fail_group(store *s, store_job *g, const store_job *not_run, const char *why)
{
    bool ran = true;
    for (store_job *j = g; j; j = j->next) {
        if (j == not_run) ran = false;
        if (!ran || j->rc == 0) {
            if (ran && j->undo) j->undo(s, j);
            errmsg_set(j->err, sizeof j->err, "%s", why);
        }
        j->rc = -1;
    }
}

static void run_group(store *s, store_job *g)
{
    char why[512];
    pthread_mutex_lock(&s->lock);
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        store_db_error(s, g->what, why, sizeof why);
        for (store_job *j = g; j; j = j->next)
            j->rc = errmsg_set(j->err, sizeof j->err, "%s", why);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    for (store_job *j = g; j; j = j->next) {
        run_job(s, j);
        if (sqlite3_get_autocommit(s->db)) {
            /* Rolled back by SQLite itself: what ran before is lost too. */
            store_db_error(s, j->what, why, sizeof why);
            fail_group(s, g, j->next, why);
            pthread_mutex_unlock(&s->lock);
            return;
        }
    }
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        store_db_error(s, g->what, why, sizeof why);
        exec_quiet(s, "ROLLBACK");
        fail_group(s, g, NULL, why);
    } else {
        for (store_job *j = g; j; j = j->next)
            if (j->rc == 0 && j->after) j->after(s, j);
        /* Now, not in the wal hook: a checkpoint needs no open transaction. */
        if (s->checkpoint_due && s->wal_frames >= STORE_WAL_END_PAGES)
            sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        s->checkpoint_due = false;
    }
    pthread_mutex_unlock(&s->lock);
}

/* Hands the jobs of group G back: wakes their waiters, frees the posted. */
static void complete(struct store_writer *w, store_job *g)
{
    pthread_mutex_lock(&w->mu);
    for (store_job *j = g, *next; j; j = next) {
        next = j->next;
        j->next = NULL;
        if (j->waited) {
            j->finished = true;
            pthread_cond_signal(&j->cv);
        } else {
            pthread_mutex_unlock(&w->mu);
            j->done(j);
            pthread_mutex_lock(&w->mu);
            w->posted--;
        }
    }
    pthread_mutex_unlock(&w->mu);
}

/* Takes up to a group's worth of jobs off the queue (W->mu held). */
static store_job *take_group(struct store_writer *w)
{
    store_job *g = w->head, *last = g;
    int n = 1;
    while (last->next && n < STORE_WRITER_MAX_GROUP) {
        last = last->next;
        n++;
    }
    w->head = last->next;
    if (!w->head) w->tail = NULL;
    last->next = NULL;
    w->queued -= n;
    pthread_cond_broadcast(&w->room);
    return g;
}

static void *writer_main(void *arg)
{
    store *s = arg;
    struct store_writer *w = s->writer;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->work, &w->mu);
        if (!w->head) break; /* stopping, and everything ran */
        store_job *g = take_group(w);
        pthread_mutex_unlock(&w->mu);
        run_group(s, g);
        complete(w, g);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ---- the queue ---------------------------------------------------------- */

void store_writer_init(store *s)
{
    struct store_writer *w = calloc(1, sizeof *w);
    s->writer = w;
    if (!w) return; /* every job then runs on its caller's thread */
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->room, NULL);
}

void store_writer_stop(store *s)
{
    struct store_writer *w = s->writer;
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_broadcast(&w->work);
    bool started = w->started;
    pthread_mutex_unlock(&w->mu);
    if (started) pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->room);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    free(w);
    s->writer = NULL;
}

/* Starts the thread unless it runs or cannot (W->mu held). */
static void start_locked(store *s, struct store_writer *w)
{
    if (!w->started && !w->no_thread) {
        w->started = pthread_create(&w->thread, NULL, writer_main, s) == 0;
        w->no_thread = !w->started;
    }
}

void store_writer_start(store *s)
{
    struct store_writer *w = s->writer;
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    start_locked(s, w);
    pthread_mutex_unlock(&w->mu);
}

/* Queues J, starting the thread the first time (W->mu held). Returns -1
 * when there is no thread to run it: the caller runs it itself. */
static int enqueue(store *s, struct store_writer *w, store_job *j)
{
    start_locked(s, w);
    if (w->no_thread || w->stopping) return -1;
    while (w->queued >= STORE_WRITER_MAX_QUEUE && !j->waited)
        pthread_cond_wait(&w->room, &w->mu);
    j->next = NULL;
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    w->queued++;
    pthread_cond_signal(&w->work);
    return 0;
}

/* A group of one on the caller's thread: no writer thread could start. */
static void run_here(store *s, store_job *j)
{
    j->next = NULL;
    run_group(s, j);
}

int store_writer_run(store *s, store_job *j)
{
    struct store_writer *w = s->writer;
    if (!j->what) j->what = "cannot write";
    j->waited = true;
    j->finished = false;
    if (!w) return run_here(s, j), j->rc;
    pthread_cond_init(&j->cv, NULL);
    pthread_mutex_lock(&w->mu);
    if (enqueue(s, w, j)) {
        pthread_mutex_unlock(&w->mu);
        run_here(s, j);
    } else {
        while (!j->finished)
            pthread_cond_wait(&j->cv, &w->mu);
        pthread_mutex_unlock(&w->mu);
    }
    pthread_cond_destroy(&j->cv);
    return j->rc;
}

void store_writer_post(store *s, store_job *j)
{
    struct store_writer *w = s->writer;
    if (!j->what) j->what = "cannot write";
    j->waited = false;
    j->finished = false;
    if (w) {
        pthread_mutex_lock(&w->mu);
        int queued = enqueue(s, w, j);
        if (queued == 0) w->posted++;
        pthread_mutex_unlock(&w->mu);
        if (queued == 0) return;
    }
    run_here(s, j);
    j->done(j);
}

static int nothing(store *s, store_job *j)
{
    (void)s;
    (void)j;
    return 0;
}

void store_writer_flush(store *s)
{
    /* Only when something was handed over: a reader of a store that writes
     * nothing (`aloft log`) never takes the write lock. */
    struct store_writer *w = s->writer;
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    int posted = w->posted;
    pthread_mutex_unlock(&w->mu);
    if (posted == 0) return;
    store_job j = {.run = nothing, .what = "cannot write"};
    store_writer_run(s, &j);
}
