/* The watchdog: see watchdog.h. */
#include "mission/watchdog.h"
#include "worker/vm.h"

#include "clock.h"
#include "errmsg.h"
#include "mission/record.h"
#include "mission/world.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS 50

struct watchdog {
    watchdog_fire_fn fire;
    void *ud;
    atomic_bool *cancel;

    pthread_t thread;
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;
    bool stopping;
    sandbox *sb;          /* watched, or NULL */
    uint64_t deadline_ms; /* the sandbox's deadline + WATCHDOG_OVERRUN_MS */
    uint64_t cancel_ms;   /* when the cancel was first seen while watching; 0 = not */
    bool firing, fired;
};

static uint64_t mono_ms(void)
{
    return clock_now_ns() / 1000000u;
}

static const char *message(int why, char *buf, size_t len)
{
    if (why == WATCHDOG_OVERRUN)
        snprintf(buf, len,
                 "hung: the mission ran more than %d ms past its wall-clock limit without "
                 "stopping, and was ended from outside the VM",
                 WATCHDOG_OVERRUN_MS);
    else
        snprintf(buf, len,
                 "hung: cancelled, but the mission did not stop within %d ms, and was ended "
                 "from outside the VM",
                 WATCHDOG_CANCEL_MS);
    return buf;
}

/* Under the lock: why the watched mission must be ended now, or -1. */
static int overdue(watchdog *w, uint64_t now)
{
    if (!w->sb) return -1;
    if (now >= w->deadline_ms) return WATCHDOG_OVERRUN;
    if (w->cancel && atomic_load(w->cancel)) {
        if (!w->cancel_ms) w->cancel_ms = now;
        if (now >= w->cancel_ms + WATCHDOG_CANCEL_MS) return WATCHDOG_CANCEL_IGNORED;
    }
    return -1;
}

static void *watch_main(void *arg)
{
    watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        int why = overdue(w, mono_ms());
        if (why >= 0) {
            w->firing = true;
            sandbox *sb = w->sb;
            pthread_mutex_unlock(&w->lock);
            /* Skills refuse to act from now on, should the VM come back. */
            sandbox_cancel(sb);
            char msg[300];
            w->fire(w->ud, sb, (watchdog_why)why, message(why, msg, sizeof msg));
            /* The drone is down and the mission recorded: now the VM goes,
             * with the worker process it runs in (nothing in process), and
             * the mission's thread, waiting on it, comes back. */
            vm_kill_sandbox(sb, msg);
            pthread_mutex_lock(&w->lock);
            w->firing = false;
            w->fired = true;
            pthread_cond_broadcast(&w->cond);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += POLL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

watchdog *watchdog_start(watchdog_fire_fn fire, void *ud, atomic_bool *cancel, char *err,
                         size_t errlen)
{
    watchdog *w = calloc(1, sizeof *w);
    if (!w) return errmsg_set(err, errlen, "out of memory"), NULL;
    w->fire = fire;
    w->ud = ud;
    w->cancel = cancel;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w)) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
        free(w);
        errmsg_set(err, errlen, "cannot start the watchdog thread");
        return NULL;
    }
    return w;
}

/* Under the lock: waits for a FIRE under way to return. */
static void wait_fire(watchdog *w)
{
    while (w->firing)
        pthread_cond_wait(&w->cond, &w->lock);
}

void watchdog_watch(watchdog *w, sandbox *sb)
{
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    wait_fire(w);
    if (!w->fired) {
        w->sb = sb;
        w->cancel_ms = 0;
        w->deadline_ms = sb ? mono_ms() + sandbox_remaining_ms(sb) + WATCHDOG_OVERRUN_MS : 0;
    }
    pthread_mutex_unlock(&w->lock);
}

bool watchdog_fired(watchdog *w)
{
    if (!w) return false;
    pthread_mutex_lock(&w->lock);
    bool fired = w->fired;
    pthread_mutex_unlock(&w->lock);
    return fired;
}

bool watchdog_stop(watchdog *w)
{
    if (!w) return false;
    pthread_mutex_lock(&w->lock);
    wait_fire(w);
    w->stopping = true;
    bool fired = w->fired;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
    return fired;
}

int watchdog_end_mission(struct mission_world *world, struct mission_record *rec, const char *msg,
                         char *out, size_t outlen)
{
    char err[512];
    int rc = 0;
    if (world && world->drone) {
        if (mission_world_land(world, err, sizeof err) == 0) {
            snprintf(out, outlen, "%s; the drone was stopped and landed", msg);
        } else {
            snprintf(out, outlen, "%s; the drone was stopped but did not land: %s", msg, err);
            rc = -1;
        }
    } else {
        snprintf(out, outlen, "%s", msg);
    }
    if (rec && mission_record_hung(rec, out, err, sizeof err)) {
        size_t n = strlen(out);
        snprintf(out + n, outlen - n, " (not recorded: %s)", err);
        rc = -1;
    }
    return rc;
}
