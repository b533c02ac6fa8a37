/* The flight's stop handle (SPEC §7 "Front ends": a handle that any thread
 * can stop): a flight flying a slow plan on its own thread is stopped from
 * another one, and ends cancelled with the drone landed; a stop that came
 * before the plan's sandbox existed stops the plan at its start.
 * labels: mission safety */
#include "loader/loader.h"
#include "mission/flight.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* A plan that flies for minutes at time scale 1: it ends only if stopped. */
static const char slow_plan[] = "60{mf(50);mb(50)}";

static skill_registry *reg;
static scene sc;
static char db_path[80];

/* The skill calls so far; the first posts STARTED: the plan is flying. */
typedef struct started {
    sem_t flying;
    atomic_int calls;
} started;

static void on_skill(void *ud, struct mission_world *w, const skill_event *ev)
{
    (void)w;
    started *s = ud;
    if (ev->kind == SKILL_EVENT_CALL && atomic_fetch_add(&s->calls, 1) == 0) sem_post(&s->flying);
}

typedef struct job {
    flight_config c;
    flight_outcome out;
    int rc;
} job;

static void *fly(void *arg)
{
    job *j = arg;
    j->rc = flight_fly(&j->c, &j->out);
    return NULL;
}

static void setup(job *j, flight_handle *h, started *s)
{
    flight_config_defaults(&j->c);
    j->c.sim = (sim_options){.time_scale = 1, .seed = 1};
    j->c.scene = &sc;
    j->c.plan = slow_plan;
    j->c.plan_len = strlen(slow_plan);
    j->c.reg = reg;
    j->c.limits = (sandbox_limits){.max_instructions = SANDBOX_DEFAULT_INSTRUCTIONS,
                                   .max_memory = SANDBOX_DEFAULT_MEMORY,
                                   .timeout_ms = SANDBOX_DEFAULT_TIMEOUT_MS,
                                   .max_output = SANDBOX_DEFAULT_OUTPUT};
    j->c.db = db_path;
    j->c.stop = h;
    flight_add_sink(&j->c, &(flight_sink){.skill = on_skill, .ud = s});
}

/* The outcome of a stopped flight: cancelled, recorded so, landed. */
static void check_stopped(const job *j)
{
    CHECK(j->rc == 0, "flight_fly: %s", j->out.error);
    CHECK(j->out.flown);
    CHECK(j->out.status == STORE_CANCELLED, "status %s", store_status_name(j->out.status));
    CHECK(j->out.run.status == RUNNER_CANCELLED, "runner status %d", (int)j->out.run.status);
    CHECK(!j->out.ok);
    CHECK(j->out.landed && j->out.recorded);
    CHECK(j->out.pose.z == 0, "z %.1f after the landing", j->out.pose.z);
    CHECK(j->out.mission_id > 0);
}

/* Stopped from this thread while the flight's thread flies the plan. */
static void stop_in_flight(void)
{
    started s = {.calls = 0};
    sem_init(&s.flying, 0, 0);
    flight_handle h;
    flight_handle_init(&h);
    job j;
    setup(&j, &h, &s);
    pthread_t t;
    if (pthread_create(&t, NULL, fly, &j) != 0) {
        CHECK(0, "cannot start the flight's thread");
        return;
    }
    sem_wait(&s.flying);
    CHECK(!flight_stopped(&h));
    flight_stop(&h);
    CHECK(flight_stopped(&h));
    pthread_join(t, NULL);
    check_stopped(&j);
    /* The plan's 120 motions take minutes: stopped, it ended after the
     * first few. */
    CHECK(atomic_load(&s.calls) < 10, "%d skill calls after the stop", atomic_load(&s.calls));
    sem_destroy(&s.flying);
    flight_outcome_free(&j.out);
}

/* Stopped before the flight began: the plan's sandbox is cancelled as it
 * is handed over, before a skill runs. */
static void stop_before(void)
{
    started s = {.calls = 0};
    sem_init(&s.flying, 0, 0);
    flight_handle h;
    flight_handle_init(&h);
    flight_stop(&h);
    flight_stop(&h); /* twice: no harm */
    job j;
    setup(&j, &h, &s);
    fly(&j);
    check_stopped(&j);
    CHECK(atomic_load(&s.calls) == 0, "%d skill calls after the stop", atomic_load(&s.calls));
    sem_destroy(&s.flying);
    flight_outcome_free(&j.out);
}

int main(void)
{
    char err[512];
    snprintf(db_path, sizeof db_path, "/tmp/aloft-test-flight-stop-%d.db", (int)getpid());
    char scene_path[80];
    snprintf(scene_path, sizeof scene_path, "/tmp/aloft-test-flight-stop-%d.json", (int)getpid());
    FILE *f = fopen(scene_path, "w");
    fputs("{\"limits\":{\"geofence_radius\":500},\"objects\":[]}", f);
    fclose(f);
    reg = loader_standard(NULL, 0, NULL, NULL);
    if (!reg || scene_load(&sc, scene_path, err, sizeof err)) {
        fprintf(stderr, "setup: %s\n", reg ? err : "no registry");
        return 1;
    }
    stop_in_flight();
    stop_before();
    registry_free(reg);
    remove(scene_path);
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[96];
        snprintf(p, sizeof p, "%s%s", db_path, suffix[i]);
        remove(p);
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_flight_stop: ok\n");
    return failures != 0;
}
