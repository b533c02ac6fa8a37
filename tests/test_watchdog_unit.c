/* The watchdog's thread in-process (tests/test_watchdog.py sees it end real
 * processes): it fires for an overrun and for an ignored cancel, never
 * before its time; it fires once, stop waits for a fire under way, and
 * watchdog_end_mission lands the drone and records the mission as hung, or
 * says what it could not do.
 * labels: watchdog safety waits */
#include "mission/record.h"
#include "mission/runner.h"
#include "mission/watchdog.h"
#include "drone/tello.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

typedef struct fired {
    atomic_int count;
    atomic_int in_fire; /* 1 while FIRE runs */
    atomic_int done;    /* 1 once FIRE returned */
    long linger_ms;     /* how long FIRE takes */
    watchdog_why why;
    uint64_t at_ms;
    sandbox *sb;
    char msg[300];
} fired;

static void on_fire(void *ud, sandbox *sb, watchdog_why why, const char *msg)
{
    fired *f = ud;
    f->at_ms = mono_ms();
    f->why = why;
    f->sb = sb;
    snprintf(f->msg, sizeof f->msg, "%s", msg);
    atomic_store(&f->in_fire, 1);
    if (f->linger_ms) sleep_ms(f->linger_ms);
    atomic_fetch_add(&f->count, 1);
    atomic_store(&f->done, 1);
}

/* Waits for FIRE; the 30 s bound only keeps a broken watchdog from hanging
 * the test (the fire is due within about 2 s). */
static bool wait_fired(fired *f)
{
    for (int i = 0; i < 3000 && !atomic_load(&f->done); i++)
        sleep_ms(10);
    return atomic_load(&f->done);
}

static void test_overrun(void)
{
    char err[256] = "";
    fired f = {0};
    watchdog *w = watchdog_start(on_fire, &f, NULL, err, sizeof err);
    CHECK(w != NULL, "%s", err);
    sandbox_limits lim = {.timeout_ms = 100};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    uint64_t t0 = mono_ms();
    watchdog_watch(w, sb);
    CHECK(wait_fired(&f), "watchdog overrun: a mission past its deadline was never ended");
    /* a lower bound only: firing early is the fault, firing late is load */
    CHECK(f.at_ms >= t0 + 100 + WATCHDOG_OVERRUN_MS - 1,
          "watchdog overrun: fired %llu ms after the watch, before the deadline + %d ms",
          (unsigned long long)(f.at_ms - t0), WATCHDOG_OVERRUN_MS);
    CHECK(f.why == WATCHDOG_OVERRUN && f.sb == sb);
    CHECK(strstr(f.msg, "hung: the mission ran more than 2000 ms past its wall-clock limit") ==
              f.msg,
          "%s", f.msg);
    CHECK(sandbox_poison(sb) == SANDBOX_CANCELLED || !sandbox_alive(sb),
          "watchdog: the sandbox was not cancelled before FIRE");
    CHECK(watchdog_fired(w));
    /* once fired, a new watch is ignored: it fires once */
    watchdog_watch(w, sb);
    sleep_ms(100);
    CHECK(atomic_load(&f.count) == 1);
    CHECK(watchdog_stop(w), "watchdog_stop: fired, but said not");
    sandbox_free(sb);
}

static void test_cancel_ignored(void)
{
    char err[256] = "";
    fired f = {0};
    atomic_bool cancel = false;
    watchdog *w = watchdog_start(on_fire, &f, &cancel, err, sizeof err);
    sandbox *sb = sandbox_new(NULL, err, sizeof err); /* five minutes: no overrun */
    watchdog_watch(w, sb);
    sleep_ms(120); /* a few polls with the flag down: nothing happens */
    CHECK(!watchdog_fired(w), "watchdog cancel: fired with no cancel and no overrun");
    uint64_t t0 = mono_ms();
    atomic_store(&cancel, true);
    CHECK(wait_fired(&f), "watchdog cancel: an ignored cancel was never acted on");
    CHECK(f.at_ms >= t0 + WATCHDOG_CANCEL_MS - 1,
          "watchdog cancel: fired %llu ms after the cancel, before %d ms",
          (unsigned long long)(f.at_ms - t0), WATCHDOG_CANCEL_MS);
    CHECK(f.why == WATCHDOG_CANCEL_IGNORED);
    CHECK(strstr(f.msg, "hung: cancelled, but the mission did not stop within 1000 ms") == f.msg,
          "%s", f.msg);
    CHECK(watchdog_stop(w));
    sandbox_free(sb);
}

/* Nothing watched (or the watch ended): no fire, even with the cancel up. */
static void test_idle(void)
{
    char err[256] = "";
    fired f = {0};
    atomic_bool cancel = true;
    watchdog *w = watchdog_start(on_fire, &f, &cancel, err, sizeof err);
    sandbox_limits lim = {.timeout_ms = 1};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    watchdog_watch(w, sb);
    watchdog_watch(w, NULL);
    sleep_ms(WATCHDOG_CANCEL_MS + 300);
    CHECK(!watchdog_fired(w), "watchdog: fired with nothing watched");
    CHECK(!watchdog_stop(w));
    sandbox_free(sb);
    /* NULL is no watchdog */
    watchdog_watch(NULL, NULL);
    CHECK(!watchdog_fired(NULL) && !watchdog_stop(NULL));
}

/* stop while FIRE runs: waits until it returned, so FIRE's sandbox stays
 * valid (the caller frees it after stop). */
static void test_stop_waits_for_fire(void)
{
    char err[256] = "";
    fired f = {.linger_ms = 300};
    atomic_bool cancel = true;
    watchdog *w = watchdog_start(on_fire, &f, &cancel, err, sizeof err);
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    watchdog_watch(w, sb);
    for (int i = 0; i < 3000 && !atomic_load(&f.in_fire); i++)
        sleep_ms(10);
    CHECK(atomic_load(&f.in_fire));
    bool was = watchdog_stop(w);
    CHECK(atomic_load(&f.done), "watchdog_stop returned while FIRE was still running");
    CHECK(was);
    sandbox_free(sb);
}

static char scene_path[96], db_path[96];

static void test_end_mission(void)
{
    char out[1024], err[256] = "";
    /* no world, no record: the message alone */
    CHECK(watchdog_end_mission(NULL, NULL, "hung: x", out, sizeof out) == 0);
    CHECK(strcmp(out, "hung: x") == 0, "%s", out);

    mission_world world;
    sim_options so = {.time_scale = 0, .seed = 1};
    CHECK(mission_world_sim(&world, scene_path, &so, err, sizeof err) == 0, "%s", err);
    CHECK(mission_world_launch(&world, err, sizeof err) == 0, "%s", err);
    store_mission_info info = {.drone = "sim", .seed = 1};
    mission_record *rec = mission_record_open(db_path, &info, &world, err, sizeof err);
    CHECK(rec != NULL, "%s", err);
    CHECK(watchdog_end_mission(&world, rec, "hung: y", out, sizeof out) == 0, "%s", out);
    CHECK(strcmp(out, "hung: y; the drone was stopped and landed") == 0, "%s", out);
    CHECK(mission_world_pose(&world).z == 0, "watchdog: the drone is at %.0f cm, not landed",
          mission_world_pose(&world).z);
    cJSON *list = store_list_json(mission_record_store(rec), err, sizeof err);
    char *text = cJSON_PrintUnformatted(list);
    CHECK(text && strstr(text, "\"status\":\"hung\""), "the store says %s", text ? text : err);
    free(text);
    cJSON_Delete(list);

    /* the store refuses the end (its table is gone): said, and -1 */
    sqlite3 *db;
    CHECK(sqlite3_open(db_path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "DROP TABLE missions", NULL, NULL, NULL) == SQLITE_OK, "%s",
          sqlite3_errmsg(db));
    sqlite3_close(db);
    CHECK(watchdog_end_mission(&world, rec, "hung: z", out, sizeof out) == -1, "%s", out);
    CHECK(strstr(out, "hung: z; the drone was stopped and landed (not recorded: ") == out, "%s",
          out);
    mission_record_free(rec);
    mission_world_close(&world, true);

    /* a world with no drone: the message alone */
    mission_world none = {0};
    CHECK(watchdog_end_mission(&none, NULL, "hung: n", out, sizeof out) == 0);
    CHECK(strcmp(out, "hung: n") == 0, "%s", out);
}

/* A Tello that never answers (a bound UDP port nobody reads): the landing
 * fails and the text says the drone was not landed. */
static void test_end_mission_landing_fails(void)
{
    char out[1024], err[256] = "";
    int silent = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    CHECK(bind(silent, (struct sockaddr *)&a, sizeof a) == 0);
    getsockname(silent, (struct sockaddr *)&a, &alen);
    tello_config cfg;
    tello_config_init(&cfg);
    snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
    cfg.port = ntohs(a.sin_port);
    int probe = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in st = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t stlen = sizeof st;
    bind(probe, (struct sockaddr *)&st, sizeof st);
    getsockname(probe, (struct sockaddr *)&st, &stlen);
    close(probe); /* a free port for the driver's state socket */
    cfg.state_port = ntohs(st.sin_port);
    cfg.video = false;
    cfg.keepalive_ms = 0;
    cfg.retries = 0;
    cfg.timeout_ms = cfg.takeoff_timeout_ms = 200;
    drone *drv = tello_new(&cfg, err, sizeof err);
    CHECK(drv != NULL, "%s", err);
    mission_world world;
    CHECK(mission_world_wrap(&world, drv, NULL, err, sizeof err) == 0, "%s", err);
    world.launched = true; /* as if it had taken off: the watchdog must land it */
    /* its state says it is 50 cm up */
    const char state[] = "pitch:0;roll:0;yaw:0;vgx:0;vgy:0;vgz:0;templ:60;temph:63;tof:60;h:50;"
                         "bat:80;baro:1.00;time:1;agx:0.00;agy:0.00;agz:-1000.00;\r\n";
    for (int i = 0; i < 5; i++) {
        sendto(silent, state, strlen(state), 0, (struct sockaddr *)&st, sizeof st);
        sleep_ms(20);
    }
    CHECK(watchdog_end_mission(&world, NULL, "hung: t", out, sizeof out) == -1, "%s", out);
    CHECK(strstr(out, "hung: t; the drone was stopped but did not land: landing failed") == out,
          "%s", out);
    mission_world_close(&world, false);
    close(silent);
}

int main(void)
{
    snprintf(scene_path, sizeof scene_path, "/tmp/aloft-test-watchdog-%d.json", (int)getpid());
    snprintf(db_path, sizeof db_path, "/tmp/aloft-test-watchdog-%d.db", (int)getpid());
    FILE *f = fopen(scene_path, "w");
    fputs("{\"limits\":{\"geofence_radius\":200},\"objects\":[]}", f);
    fclose(f);
    test_overrun();
    test_cancel_ignored();
    test_idle();
    test_stop_waits_for_fire();
    test_end_mission();
    test_end_mission_landing_fails();
    unlink(scene_path);
    char side[128];
    unlink(db_path);
    snprintf(side, sizeof side, "%s-wal", db_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db_path);
    unlink(side);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_watchdog_unit: all checks passed\n");
    return failures ? 1 : 0;
}
