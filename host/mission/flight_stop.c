/* The stop handle of a flight: see flight_stop.h. */
#include "mission/flight_stop.h"

#include <sched.h>

void flight_handle_init(flight_handle *h)
{
    atomic_init(&h->stopped, false);
    atomic_init(&h->target, NULL);
    atomic_init(&h->stopping, 0);
}

void flight_stop(flight_handle *h)
{
    /* The flag first: a sandbox handed over after this sees it (below). */
    atomic_store(&h->stopped, true);
    atomic_fetch_add(&h->stopping, 1);
    sandbox *sb = atomic_load(&h->target);
    if (sb) sandbox_cancel(sb); /* an atomic store: safe in a handler */
    atomic_fetch_sub(&h->stopping, 1);
}

bool flight_stopped(const flight_handle *h)
{
    return atomic_load(&h->stopped);
}

atomic_bool *flight_handle_flag(flight_handle *h)
{
    return &h->stopped;
}

void flight_handle_sandbox(flight_handle *h, sandbox *sb)
{
    atomic_store(&h->target, sb);
    /* A stop that read the old sandbox may still be cancelling it: the
     * caller frees that one after this returns. The wait is a few
     * instructions long; a signal handler on this very thread has
     * finished before this runs on. */
    while (atomic_load(&h->stopping) > 0)
        sched_yield();
    /* Sequentially consistent: either the stop read this sandbox, or this
     * reads the stop's flag. */
    if (sb && atomic_load(&h->stopped)) sandbox_cancel(sb);
}
