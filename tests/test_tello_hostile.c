/*
 * A hostile Tello (tests/tools/tello_emu with its hostile options) against
 * the driver behind the constraint guard, as `aloft run --drone tello`
 * flies it. The emulator keeps the drone's TRUE pose from the commands it
 * accepted and logs it after every motion; every test asserts that the
 * true pose never left the geofence (centred on the take-off point) or the
 * altitude band, whatever the drone reported:
 *   - the steps of short moves at the geofence's edge and under the
 *     ceiling, from a start away from the origin at a yaw of 30 degrees;
 *   - NaN, infinite and huge telemetry (yaw, height, battery), in every
 *     packet or every other one;
 *   - battery answers that are no percentage;
 *   - a drone that never acknowledges `land`;
 *   - replies that are no text (control bytes, invalid UTF-8).
 * labels: tello safety waits
 */
#include "drone/constraints.h"
#include "loader/loader.h"
#include "mission/runner.h"
#include "tello_harness.h"

#include <ctype.h>
#include <math.h>

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define FAST "--speed", "1000", "--turn-rate", "1440"

static skill_registry *reg;

/* The limits of one test, written as a scene file for mission_world_wrap. */
typedef struct limits {
    double fence, min_z, max_z;
} limits;

static void write_scene(char *path, size_t len, const limits *l)
{
    const char *build = getenv("BUILD");
    snprintf(path, len, "%s/tello_hostile_%d.json", build ? build : ".", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f,
            "{\"limits\":{\"geofence_radius\":%g,\"min_z\":%g,\"max_z\":%g,\"max_move\":500},"
            "\"objects\":[]}",
            l->fence, l->min_z, l->max_z);
    fclose(f);
}

/* Starts the emulator with ARGS and puts the driver, taking off at START,
 * behind the guard with limits L. Does not connect. */
static void open_world(mission_world *w, emu_proc *p, const char *name, const char *const *args,
                       const limits *l, drone_pose start, int timeout_ms)
{
    emu_start(p, name, args);
    tello_config cfg = harness_config(p, timeout_ms);
    cfg.video = false;
    cfg.start = start;
    char err[256], scene_path[512];
    write_scene(scene_path, sizeof scene_path, l);
    int rc = mission_world_wrap(w, harness_drone(&cfg), scene_path, err, sizeof err);
    unlink(scene_path);
    if (rc < 0) {
        fprintf(stderr, "mission_world_wrap: %s\n", err);
        exit(1);
    }
}

/* Checks every true pose in P's log: within the fence around the take-off
 * point (the emulator's origin) and, while airborne, within the band.
 * Poses are logged to 0.1 cm. Returns how many there were. */
static int check_true_track(const emu_proc *p, const char *what, const limits *l)
{
    FILE *f = fopen(p->log, "r");
    char line[512];
    int n = 0;
    double x, y, z, yaw;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "pose %lf %lf %lf %lf", &x, &y, &z, &yaw) != 4) continue;
        n++;
        CHECK(hypot(x, y) <= l->fence + 0.15, "%s: the drone went %.1f cm from home (fence %g)",
              what, hypot(x, y), l->fence);
        CHECK(z == 0 || (z >= l->min_z - 0.15 && z <= l->max_z + 0.15),
              "%s: the drone went to %.1f cm (band %g-%g)", what, z, l->min_z, l->max_z);
    }
    if (f) fclose(f);
    return n;
}

/* The commands the emulator received after the first LAST_N_FROM ones. */
static char *recv_since(const emu_proc *p, int from)
{
    char *all = emu_lines(p, "recv"), *s = all;
    for (int i = 0; i < from && s; i++) {
        s = strchr(s, '|');
        if (s) s++;
    }
    char *out = strdup(s ? s : "");
    free(all);
    return out;
}

static int recv_count(const emu_proc *p)
{
    char *all = emu_lines(p, "recv");
    int n = *all ? 1 : 0;
    for (char *s = all; (s = strchr(s, '|')) != NULL; s++)
        n++;
    free(all);
    return n;
}

static double dist_from(const drone_pose *a, const drone_pose *home)
{
    return hypot(a->x - home->x, a->y - home->y);
}

/* Moves through guard G; checks the result is WANT (0 or -1), and when
 * SENT is not NULL that exactly those commands reached the drone. */
static void move(drone *g, const emu_proc *p, drone_dir dir, int cm, int want, const char *sent,
                 const char *why)
{
    char err[512] = "";
    int before = recv_count(p);
    int rc = g->ops->move(g, dir, cm, err, sizeof err);
    CHECK(rc == want, "%s: move %d cm returned %d: %s", why, cm, rc, err);
    if (want < 0) CHECK(constraints_refused(g), "%s: not a constraint refusal: %s", why, err);
    if (sent) {
        char *got = recv_since(p, before);
        CHECK(strcmp(got, sent) == 0, "%s: sent '%s', want '%s'", why, got, sent);
        free(got);
    }
}

static const drone_pose far_start = {150, -80, 0, 30};

static void short_moves_at_the_fence_edge_keep_inside(void)
{
    limits l = {200, 30, 150};
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "fence", ARGS(FAST), &l, far_start, 3000);
    char err[256];
    CHECK(mission_world_launch(&w, err, sizeof err) == 0, "launch: %s", err);
    drone *g = w.drone;
    move(g, &p, DRONE_FORWARD, 190, 0, "forward 190", "to 190 cm");
    move(g, &p, DRONE_FORWARD, 10, 0, "back 20|forward 30", "to the edge");
    drone_pose at = mission_world_pose(&w);
    CHECK(fabs(dist_from(&at, &far_start) - 200) < 0.5, "at %.1f cm from home",
          dist_from(&at, &far_start));
    move(g, &p, DRONE_FORWARD, 1, -1, "", "1 cm past the edge");
    /* The pair's usual order (forward 20 first) would leave the fence:
     * back first. */
    move(g, &p, DRONE_BACK, 5, 0, "back 25|forward 20", "back 5 at the edge");
    move(g, &p, DRONE_FORWARD, 4, 0, "back 20|forward 24", "forward 4 to 199");
    move(g, &p, DRONE_BACK, 1, 0, "back 21|forward 20", "back 1 at 199");
    move(g, &p, DRONE_FORWARD, 2, 0, "back 20|forward 22", "to the edge again");
    move(g, &p, DRONE_LEFT, 5, -1, "", "sideways at the edge");
    at = mission_world_pose(&w);
    CHECK(fabs(dist_from(&at, &far_start) - 200) < 0.5, "at %.1f cm", dist_from(&at, &far_start));
    double x, y, z, yaw;
    CHECK(emu_last_pose(&p, &x, &y, &z, &yaw) == 0 && fabs(hypot(x, y) - 200) < 0.5,
          "the emulator is %.1f cm from home", hypot(x, y));
    CHECK(mission_world_land(&w, err, sizeof err) == 0, "%s", err);
    mission_world_close(&w, true);
    emu_stop(&p);
    CHECK(check_true_track(&p, "fence edge", &l) > 8, "too few poses logged");
}

static void short_moves_under_the_ceiling_and_over_the_floor_keep_inside(void)
{
    limits l = {300, 30, 150};
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "ceiling", ARGS(FAST), &l, far_start, 3000);
    char err[256];
    CHECK(mission_world_launch(&w, err, sizeof err) == 0, "launch: %s", err);
    drone *g = w.drone;
    move(g, &p, DRONE_UP, 65, 0, "up 65", "to 145");
    /* `up` usually overshoots (up 25, down 20): under the ceiling it goes
     * down first. */
    move(g, &p, DRONE_UP, 5, 0, "down 20|up 25", "up 5 to the ceiling");
    CHECK(fabs(mission_world_pose(&w).z - 150) < 0.5, "z %.1f", mission_world_pose(&w).z);
    move(g, &p, DRONE_UP, 1, 0, "", "up at the ceiling: clamped to nothing");
    move(g, &p, DRONE_DOWN, 5, 0, "down 25|up 20", "down 5 at the ceiling");
    move(g, &p, DRONE_UP, 10, 0, "down 20|up 25", "up 10, clamped to 5");
    move(g, &p, DRONE_DOWN, 115, 0, "down 115", "to 35");
    move(g, &p, DRONE_DOWN, 5, 0, "up 20|down 25", "down 5 to the floor");
    move(g, &p, DRONE_DOWN, 1, 0, "", "down at the floor: nothing");
    move(g, &p, DRONE_UP, 5, 0, "up 25|down 20", "up 5 over the floor");
    CHECK(mission_world_land(&w, err, sizeof err) == 0, "%s", err);
    mission_world_close(&w, true);
    emu_stop(&p);
    CHECK(check_true_track(&p, "ceiling", &l) > 8, "too few poses logged");
}

static void a_pair_with_no_safe_order_is_refused(void)
{
    /* Narrower than the pair's 40 cm detour: from the takeoff's 80 cm,
     * down 15 is down 35 then up 20 (to 45, under the floor) or up 20
     * then down 35 (to 100, over the ceiling). */
    limits l = {300, 50, 80};
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "narrow", ARGS(FAST), &l, far_start, 3000);
    char err[512] = "";
    CHECK(mission_world_launch(&w, err, sizeof err) == 0, "launch: %s", err);
    int before = recv_count(&p);
    CHECK(w.drone->ops->move(w.drone, DRONE_DOWN, 15, err, sizeof err) < 0, "down 15 passed");
    CHECK(constraints_refused(w.drone) && strstr(err, "altitude") && strstr(err, "neither order"),
          "refusal: %s", err);
    char *got = recv_since(&p, before);
    CHECK(*got == '\0', "sent %s", got);
    free(got);
    mission_world_close(&w, true);
    emu_stop(&p);
}

/* ---- hostile telemetry ------------------------------------------------------ */

typedef struct hostile {
    const char *field; /* --state-field */
    const char *every; /* --state-bad-every */
    const char *part;  /* the part that must be unknown ("position"), or NULL */
} hostile;

/* Does any violation's reason contain TEXT? */
static bool violation_says(const cJSON *doc, const char *text)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(doc, "violations"))
    {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "reason");
        if (cJSON_IsString(r) && strstr(r->valuestring, text)) return true;
    }
    return false;
}

static void fly_against(const hostile *h)
{
    limits l = {300, 30, 200};
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "telemetry",
               ARGS(FAST, "--state-field", h->field, "--state-bad-every", h->every), &l, far_start,
               1000);
    char err[512], what[128], unknown[64];
    snprintf(what, sizeof what, "%s every %s", h->field, h->every);
    snprintf(unknown, sizeof unknown, "unknown %s", h->part ? h->part : "");
    if (mission_world_launch(&w, err, sizeof err) < 0) {
        /* Only a battery or a height nobody can read may keep the drone on
         * the ground (the climb to the hover height needs the height). */
        CHECK(h->part && strcmp(h->part, "position") != 0 && strstr(err, unknown), "%s: launch: %s",
              what, err);
    } else {
        const char *plan = "mf(150);mu(100);mf(150);mu(100);mf(150);mr(150);mr(150);mr(150)";
        runner_opts o = {.reg = reg, .world = &w, .plan = plan, .plan_len = strlen(plan)};
        cJSON *doc = runner_run(&o);
        int refused = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "violations"));
        CHECK(refused > 0, "%s: no move refused", what);
        /* Every packet bad: the refusals name the unknown part. */
        if (h->part && strcmp(h->every, "1") == 0)
            CHECK(violation_says(doc, unknown), "%s: no refusal says '%s'", what, unknown);
        cJSON_Delete(doc);
    }
    mission_world_close(&w, true);
    emu_stop(&p);
    check_true_track(&p, what, &l);
}

static void hostile_telemetry_never_leaves_the_limits(void)
{
    static const hostile modes[] = {
        {"yaw=nan", "1", "position"},    {"yaw=inf", "1", "position"},
        {"yaw=-1e308", "1", "position"}, {"yaw=nan", "2", NULL},
        {"h=nan", "1", "height"},        {"h=1e308", "1", "height"},
        {"h=-1e308", "1", "height"},     {"h=inf", "3", NULL},
        {"bat=nan", "1", "battery"},     {"bat=-2147483649", "1", "battery"},
        {"bat=1e308", "1", "battery"},   {"bat=-5", "1", "battery"},
        {"bat=101", "1", "battery"},     {"vgx=nan", "1", NULL},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        fly_against(&modes[i]);
}

static void bad_battery_answers_are_errors(void)
{
    static const char *const answers[] = {"battery?=99999999999", "battery?=-5", "battery?=1e308",
                                          "battery?=garbage"};
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        limits l = {300, 30, 200};
        emu_proc p;
        mission_world w;
        open_world(&w, &p, "battery", ARGS(FAST, "--reply", answers[i]), &l, far_start, 300);
        char err[512] = "";
        CHECK(mission_world_launch(&w, err, sizeof err) < 0, "%s: launched", answers[i]);
        CHECK(strstr(err, "battery"), "%s: %s", answers[i], err);
        mission_world_close(&w, true);
        emu_stop(&p);
        CHECK(emu_count(&p, "recv takeoff") == 0, "%s: took off", answers[i]);
    }
}

static void a_landing_never_acknowledged_is_a_failure(void)
{
    limits l = {300, 30, 200};
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "noland", ARGS(FAST, "--ignore", "land"), &l, far_start, 500);
    char err[512] = "";
    CHECK(mission_world_launch(&w, err, sizeof err) == 0, "launch: %s", err);
    double t0 = harness_now_ms();
    CHECK(mission_world_land(&w, err, sizeof err) < 0, "an unacknowledged landing succeeded");
    double took = (harness_now_ms() - t0) / 1000;
    /* The message says how long the landing was tried ("(2 tries, 500 ms
     * each, 4.9 s in all)"): at least the tries' own timeouts, at most what
     * the call took, and not much less: it is written just before the call
     * returns, microseconds before TOOK is read; 1 s is far above that gap,
     * room for a loaded machine. */
    const char *paren = strstr(err, " tries, ");
    while (paren && paren > err && paren[-1] != '(')
        paren--;
    int tries = 0, each = 0;
    double said = -1;
    if (paren) sscanf(paren, "%d tries, %d ms each, %lf s in all", &tries, &each, &said);
    CHECK(tries > 0 && each > 0 && said >= tries * each / 1000.0 - 0.05 && said <= took + 0.05 &&
              said > took - 1,
          "said %.1f s for %d tries of %d ms, took %.1f s: %s", said, tries, each, took, err);
    CHECK(strstr(err, "landing failed") && strstr(err, "may still be flying") &&
              strstr(err, "'land'"),
          "message: %s", err);
    mission_world_close(&w, true);
    emu_stop(&p);
    double x, y, z, yaw;
    CHECK(emu_last_pose(&p, &x, &y, &z, &yaw) == 0 && z > 50, "the drone is at %.1f cm", z);
    CHECK(emu_count(&p, "done land") == 0, "landed");
}

static void a_takeoff_above_the_ceiling_is_refused(void)
{
    limits l = {300, 30, 79}; /* the Tello hovers at 80 cm after takeoff */
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "lowceiling", ARGS(FAST), &l, far_start, 1000);
    char err[512] = "";
    CHECK(mission_world_launch(&w, err, sizeof err) < 0, "took off under a 79 cm ceiling");
    CHECK(constraints_refused(w.drone) && strstr(err, "altitude") && strstr(err, "'takeoff'"),
          "refusal: %s", err);
    mission_world_close(&w, true);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv takeoff") == 0, "takeoff was sent");
    /* At 80 cm the same takeoff passes. */
    l.max_z = 80;
    open_world(&w, &p, "ceiling80", ARGS(FAST), &l, far_start, 1000);
    CHECK(mission_world_launch(&w, err, sizeof err) == 0, "launch: %s", err);
    mission_world_close(&w, true);
    emu_stop(&p);
    CHECK(check_true_track(&p, "ceiling 80", &l) > 0, "no pose logged");
}

static void reply_bytes_that_are_no_text_are_replaced(void)
{
    limits l = {300, 30, 200};
    emu_proc p;
    mission_world w;
    open_world(&w, &p, "bytes", ARGS(FAST, "--reply", "forward=error \xff\x01\xc3 x"), &l,
               far_start, 1000);
    char err[512] = "";
    CHECK(mission_world_launch(&w, err, sizeof err) == 0, "launch: %s", err);
    CHECK(w.drone->ops->move(w.drone, DRONE_FORWARD, 50, err, sizeof err) < 0, "moved");
    CHECK(strstr(err, "refused 'forward 50': error ??? x"), "message: %s", err);
    mission_world_close(&w, true);
    emu_stop(&p);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    reg = loader_standard(NULL, 0, NULL, NULL);
    short_moves_at_the_fence_edge_keep_inside();
    short_moves_under_the_ceiling_and_over_the_floor_keep_inside();
    a_pair_with_no_safe_order_is_refused();
    a_takeoff_above_the_ceiling_is_refused();
    hostile_telemetry_never_leaves_the_limits();
    bad_battery_answers_are_errors();
    a_landing_never_acknowledged_is_a_failure();
    reply_bytes_that_are_no_text_are_replaced();
    registry_free(reg);
    return harness_report("test_tello_hostile");
}
