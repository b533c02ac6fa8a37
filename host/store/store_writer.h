/*
 * The store's writer (store_writer.c): one thread per open store owns its
 * write transactions. Missions hand it their records as jobs; it runs every
 * job queued at that moment inside one transaction (group commit), each job
 * in a savepoint of its own, so that a hundred missions recording at once
 * cost one commit instead of a hundred contended ones. Not part of the
 * store's API.
 *
 * A job is either waited for (store_writer_run: it returns once the job's
 * group is committed, with the job's result or error, so the record is on
 * disk before the caller goes on) or handed over (store_writer_post: the
 * job is the writer's, committed with the next group; an error is kept and
 * reported by the mission's next waited-for record). Jobs run in the order
 * they were queued.
 */
#ifndef ALOFT_STORE_STORE_WRITER_H
#define ALOFT_STORE_STORE_WRITER_H

#include "store/store_impl.h"

#include <stdbool.h>

/* Most jobs queued and not yet run; a poster waits for room beyond it. */
#define STORE_WRITER_MAX_QUEUE 4096
/* Most jobs in one transaction. */
#define STORE_WRITER_MAX_GROUP 512

typedef struct store_job store_job;

struct store_job {
    /* Runs on the writer, under the store's lock, inside the group's
     * transaction. Returns 0 (with a result in RESULT when it has one) or
     * -1 with a message in ERR; its writes are then undone. */
    int (*run)(store *s, store_job *j);
    /* After the group committed (the job succeeded), still under the lock:
     * what must wait until the job's writes are visible. Or NULL. */
    void (*after)(store *s, store_job *j);
    /* The job's writes were lost (the group failed to commit) after RUN
     * succeeded: undo what RUN did outside the database. Or NULL. */
    void (*undo)(store *s, store_job *j);
    /* A posted job: called once it is done (on the writer, without the
     * lock) to report an error and free it. */
    void (*done)(store_job *j);
    const char *what; /* "cannot record the plan": names a failed commit */
    void *ud;
    int64_t result;
    int rc;
    char err[512];

    /* The writer's. */
    bool waited, finished;
    pthread_cond_t cv;
    store_job *next;
};

/* Prepares the writer of S (its thread starts with the first job). */
void store_writer_init(store *s);

/* Starts the writer's thread now: a store opened to record missions has it
 * from the start, so that a server's threads at rest include it. */
void store_writer_start(store *s);

/* Runs every job still queued, stops the thread and frees the writer. */
void store_writer_stop(store *s);

/* Queues J and waits until its group is committed (or failed). Returns
 * J->rc; on -1 the message is in J->err. */
int store_writer_run(store *s, store_job *j);

/* Queues J (heap-allocated; J->done frees it) without waiting, except for
 * room in the queue. */
void store_writer_post(store *s, store_job *j);

/* Waits until every job queued before the call is done: for a reader that
 * must see what was handed over without waiting. */
void store_writer_flush(store *s);

#endif
