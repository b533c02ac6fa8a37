/* The mission's watch thread: see watch_thread.h. */
#include "mission/watch_thread.h"

#include "drone/constraints.h"
#include "errmsg.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct mission_watch {
    mission_world *world;
    double hover_scale;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;
};

/* A return flown from this thread gives up on a cancel (then lands). */
static bool cancelled(void *ud)
{
    const mission_world *w = ud;
    return w->cancel && atomic_load(w->cancel);
}

static void *watch_main(void *arg)
{
    mission_watch *mw = arg;
    pthread_mutex_lock(&mw->lock);
    while (!mw->stopping) {
        pthread_mutex_unlock(&mw->lock);
        constraints_watch_tick(mw->world->drone, mw->hover_scale, cancelled, mw->world);
        pthread_mutex_lock(&mw->lock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += MISSION_WATCH_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        if (!mw->stopping) pthread_cond_timedwait(&mw->cond, &mw->lock, &ts);
    }
    pthread_mutex_unlock(&mw->lock);
    return NULL;
}

mission_watch *mission_watch_start(mission_world *w, double hover_scale, char *err, size_t errlen)
{
    mission_watch *mw = calloc(1, sizeof *mw);
    if (!mw) return errmsg_set(err, errlen, "out of memory"), NULL;
    mw->world = w;
    mw->hover_scale = hover_scale;
    pthread_mutex_init(&mw->lock, NULL);
    pthread_cond_init(&mw->cond, NULL);
    if (pthread_create(&mw->thread, NULL, watch_main, mw)) {
        pthread_mutex_destroy(&mw->lock);
        pthread_cond_destroy(&mw->cond);
        free(mw);
        errmsg_set(err, errlen, "cannot start the watch thread");
        return NULL;
    }
    return mw;
}

void mission_watch_stop(mission_watch *mw)
{
    if (!mw) return;
    pthread_mutex_lock(&mw->lock);
    mw->stopping = true;
    pthread_cond_broadcast(&mw->cond);
    pthread_mutex_unlock(&mw->lock);
    pthread_join(mw->thread, NULL);
    pthread_mutex_destroy(&mw->lock);
    pthread_cond_destroy(&mw->cond);
    free(mw);
}

double mission_watch_hover_scale(const mission_world *w, double time_scale)
{
    if (!w->sim || !w->scene || time_scale <= 0) return 0;
    const scene_wind *wind = &w->scene->wind;
    return wind->speed > 0 || wind->gust > 0 ? time_scale : 0;
}
