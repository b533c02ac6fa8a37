/*
 * Flights of `aloft eval`: each is a child process (`aloft run ... --json`)
 * whose one JSON document is read from its stdout, so that eval flies every
 * task run through the same mission lifecycle as `aloft run`. Up to JOBS
 * children run at once.
 */
#ifndef ALOFT_EVAL_FLIGHTS_H
#define ALOFT_EVAL_FLIGHTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct evalflight {
    char **argv; /* in: the child's argv, argv[0] the program to execute */
    int status;  /* out: exit status, or -1 when it could not start or was killed */
    char *out;   /* out: everything it printed on stdout (malloc'd, NUL-terminated) */
    char *err;   /* out: the last few KiB of its stderr */
    bool ran;    /* out: false when skipped (stopped or cancelled before its turn) */
} evalflight;

/* Called once per finished flight, from the thread that ran it (calls are
 * serialised). Returns true to start no further flights. */
typedef bool (*evalflight_done_fn)(evalflight *f, int index, void *ud);

/* Runs the N flights, JOBS at a time (1..64), in index order of start.
 * CANCEL (may be NULL) set: no further flight starts; running ones are left
 * to finish (they see the same Ctrl-C as their process group). Returns how
 * many threads flew them (0: none could start, the calling thread did). */
int evalflights_run(evalflight *f, int n, int jobs, atomic_bool *cancel, evalflight_done_fn done,
                    void *ud);

void evalflight_clear(evalflight *f);

#endif
