/*
 * The simulated drone: kinematics, clock, battery and collisions. The camera
 * lives in sim_camera.c; both share struct sim from sim_internal.h.
 */
#include "drone/sim_internal.h"

#include "clock.h"
#include "drone/heading.h"
#include "errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIM_DRONE_RADIUS 10.0 /* cm kept clear of every box */
#define SIM_DRAIN_PER_S 0.1   /* battery percent per second of flight */
#define SIM_POLL_MS 10.0      /* real time between abort polls */
/* Simulated time between two measured states handed to the watch: 20 per
 * simulated second, twice SPEC §10's 10, so that a drone at its own speed
 * with a wind of half of it behind goes at most 7.5 cm between two looks. */
#define SIM_TICK_MS 50.0

static void sleep_ms(double ms)
{
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static bool aborted(drone *d)
{
    return d->abort && d->abort(d->abort_ud);
}

/*
 * Wind (SPEC §3). The gust of simulated second K is drawn from a hash of the
 * seed and K, not from the camera's random stream, so the wind a drone meets
 * depends only on the scene, the seed and the simulated time: not on the
 * time scale, on how finely a motion is animated, or on what the camera saw.
 */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The gust of simulated second K: two independent normal draws (Box-Muller). */
static void gust_of_second(const sim *s, int64_t k, double *gx, double *gy)
{
    uint64_t h1 = mix64(s->opts.seed ^ mix64((uint64_t)k * 2 + 0x5851f42d4c957f2dull));
    uint64_t h2 = mix64(h1 ^ 0xda3e39cb94b95bdbull);
    double u1 = ((h1 >> 11) + 1) * (1.0 / 9007199254740993.0); /* (0, 1] */
    double u2 = (h2 >> 11) * (1.0 / 9007199254740992.0);
    double r = sqrt(-2 * log(u1)) * s->scene.wind.gust;
    *gx = r * cos(2 * M_PI * u2);
    *gy = r * sin(2 * M_PI * u2);
}

/* Adds to the drift what the wind does between simulated times T0 and T1
 * (ms), piece by piece across the seconds whose gusts differ. */
static void blow(sim *s, double t0, double t1)
{
    const scene_wind *w = &s->scene.wind;
    if (w->speed <= 0 && w->gust <= 0) return;
    double rad = w->heading * M_PI / 180;
    double vx = w->speed * sin(rad), vy = w->speed * cos(rad); /* cm/s */
    while (t0 < t1) {
        int64_t k = (int64_t)floor(t0 / 1000);
        double end = fmin(t1, (double)(k + 1) * 1000), dt = (end - t0) / 1000;
        double gx = 0, gy = 0;
        if (w->gust > 0) gust_of_second(s, k, &gx, &gy);
        s->drift_x += (vx + gx) * dt;
        s->drift_y += (vy + gy) * dt;
        t0 = end;
    }
}

/* Advances the clock, the battery and the wind by SIM_MS of flight. */
static void advance(sim *s, double sim_ms)
{
    if (s->state.flying) blow(s, s->clock_ms, s->clock_ms + sim_ms);
    s->clock_ms += sim_ms;
    if (s->state.flying) {
        s->battery -= SIM_DRAIN_PER_S * sim_ms / 1000;
        if (s->battery < 0) s->battery = 0;
        s->state.flight_time_s += sim_ms / 1000;
    }
    s->state.battery = (int)ceil(s->battery);
}

/* A motion interpolates between s->from and s->to; the wind adds its drift. */
static void step_pose(sim *s, double frac)
{
    drone_pose *p = &s->state.pose;
    p->x = s->from.x + (s->to.x - s->from.x) * frac + s->drift_x;
    p->y = s->from.y + (s->to.y - s->from.y) * frac + s->drift_y;
    p->z = s->from.z + (s->to.z - s->from.z) * frac;
    p->yaw = heading_wrap(s->from.yaw + (s->to.yaw - s->from.yaw) * frac);
    s->state.tof_cm = s->state.baro_cm = p->z;
}

/* Moves the motion on to AT simulated ms of its DURATION (AT > *DONE) and
 * hands the state to the watch; the live view sees every tick in real time
 * and the end of an instant motion. */
static void tick(sim *s, double duration, double at, double *done)
{
    advance(s, at - *done);
    step_pose(s, duration > 0 ? at / duration : 1);
    *done = at;
    drone_state st = s->state;
    st.known = DRONE_KNOWN_ALL;
    drone_measured(&s->drone, &st);
    if (s->opts.on_pose && (s->opts.time_scale > 0 || at >= duration))
        s->opts.on_pose(s->opts.on_pose_ud, &s->state.pose);
}

/*
 * Runs the motion from s->from to s->to, which takes DURATION simulated ms,
 * moving the pose as time passes (the wind's drift included). Time moves in
 * ticks of SIM_TICK_MS simulated ms counted from the motion's start, at any
 * time scale: after each tick the measured state goes to the watch
 * (drone_measured) and the abort callback is asked, so that a watch that
 * trips stops the motion at the same simulated moment whether the run is
 * instant or in real time. Returns 0 when finished, -1 when aborted (the
 * motion stays where it got to).
 */
static int animate(sim *s, double duration, char *err, size_t errlen)
{
    drone *d = &s->drone;
    s->drift_x = s->drift_y = 0;
    if (aborted(d)) return errmsg_set(err, errlen, "cancelled");
    double done = 0;
    if (duration <= 0) {
        tick(s, 0, 0, &done);
        return 0;
    }
    double scale = s->opts.time_scale, start = clock_now_ms();
    for (;;) {
        /* Instant: every tick at once; real time: the ticks whose time came. */
        double due = scale <= 0 ? duration : fmin(duration, (clock_now_ms() - start) * scale);
        while (done < duration) {
            double next = fmin(duration, done + SIM_TICK_MS);
            if (next > due) break;
            tick(s, duration, next, &done);
            if (aborted(d)) return errmsg_set(err, errlen, "cancelled");
        }
        if (done >= duration) return 0;
        if (aborted(d)) return errmsg_set(err, errlen, "cancelled");
        sleep_ms(fmin(SIM_POLL_MS, (fmin(duration, done + SIM_TICK_MS) - due) / scale));
    }
}

/* Where along the segment A->B (0..1) it first enters box O grown by R, or
 * -1 if it does not (slab method). */
double sim_segment_box(const double a[3], const double b[3], const scene_object *o, double r)
{
    double lo[3] = {o->x - o->w / 2 - r, o->y - o->d / 2 - r, o->z - r};
    double hi[3] = {o->x + o->w / 2 + r, o->y + o->d / 2 + r, o->z + o->h + r};
    double t0 = 0, t1 = 1;
    for (int i = 0; i < 3; i++) {
        double dir = b[i] - a[i];
        if (fabs(dir) < 1e-12) {
            if (a[i] < lo[i] || a[i] > hi[i]) return -1;
            continue;
        }
        double ta = (lo[i] - a[i]) / dir, tb = (hi[i] - a[i]) / dir;
        if (ta > tb) {
            double t = ta;
            ta = tb;
            tb = t;
        }
        if (ta > t0) t0 = ta;
        if (tb < t1) t1 = tb;
        if (t0 > t1) return -1;
    }
    return t0;
}

static const char *dir_name(drone_dir dir)
{
    static const char *const names[] = {"forward", "back", "left", "right", "up", "down"};
    return (unsigned)dir < 6 ? names[dir] : "?";
}

static int sim_connect(drone *d, char *err, size_t errlen)
{
    (void)d, (void)err, (void)errlen;
    return 0;
}

static int sim_takeoff(drone *d, char *err, size_t errlen)
{
    sim *s = d->impl;
    if (s->state.flying) return 0;
    if (s->state.battery <= s->scene.limits.battery_reserve)
        return errmsg_set(err, errlen, "battery %d%% is too low to take off", s->state.battery);
    /* Instant: a mission starts at the scene's pose, and the climb to it is
     * not part of any plan. */
    s->state.flying = true;
    s->state.pose.z = s->state.tof_cm = s->state.baro_cm = s->scene.start.z;
    return 0;
}

static int sim_land(drone *d, char *err, size_t errlen)
{
    sim *s = d->impl;
    if (!s->state.flying) return 0;
    s->from = s->to = s->state.pose;
    s->to.z = 0;
    int rc = animate(s, s->from.z / s->scene.speed * 1000, err, errlen);
    if (rc == 0) s->state.flying = false;
    return rc;
}

static int sim_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    sim *s = d->impl;
    if (!s->state.flying) return errmsg_set(err, errlen, "not flying (take off first)");
    if (cm < 0) return errmsg_set(err, errlen, "distance %d cm is negative", cm);
    drone_pose p = s->state.pose;
    double rad = p.yaw * M_PI / 180, fx = sin(rad), fy = cos(rad);
    double dx = 0, dy = 0, dz = 0;
    switch (dir) {
    case DRONE_FORWARD: dx = fx, dy = fy; break;
    case DRONE_BACK: dx = -fx, dy = -fy; break;
    case DRONE_RIGHT: dx = fy, dy = -fx; break;
    case DRONE_LEFT: dx = -fy, dy = fx; break;
    case DRONE_UP: dz = 1; break;
    case DRONE_DOWN: dz = -1; break;
    default: return errmsg_set(err, errlen, "unknown direction %d", (int)dir);
    }
    s->from = s->to = p;
    s->to.x += dx * cm, s->to.y += dy * cm, s->to.z += dz * cm;
    if (s->to.z < 0)
        return errmsg_set(err, errlen, "moving down %d cm would hit the ground (at %.0f cm)", cm,
                          p.z);
    double a[3] = {p.x, p.y, p.z}, b[3] = {s->to.x, s->to.y, s->to.z};
    for (int i = 0; i < s->scene.nobjects; i++) {
        const scene_object *o = &s->scene.objects[i];
        /* A drone that starts within the margin (placed there by the scene)
         * may still move, as long as it does not enter the box itself. */
        double r = sim_segment_box(a, a, o, SIM_DRONE_RADIUS) == 0 ? 0 : SIM_DRONE_RADIUS;
        if (r == 0 && sim_segment_box(a, a, o, 0) == 0) continue;
        double t = sim_segment_box(a, b, o, r);
        if (t >= 0)
            return errmsg_set(err, errlen, "obstacle: moving %s %d cm would hit %s after %.0f cm",
                              dir_name(dir), cm, o->id, t * cm);
    }
    return animate(s, cm / s->scene.speed * 1000, err, errlen);
}

static int sim_turn(drone *d, int degrees, char *err, size_t errlen)
{
    sim *s = d->impl;
    if (!s->state.flying) return errmsg_set(err, errlen, "not flying (take off first)");
    s->from = s->to = s->state.pose;
    s->to.yaw = s->from.yaw + degrees;
    return animate(s, fabs((double)degrees) / s->scene.yaw_rate * 1000, err, errlen);
}

/* Hovering in place: only the wind moves the drone. */
static int sim_wait(drone *d, int ms, char *err, size_t errlen)
{
    sim *s = d->impl;
    if (ms < 0) return errmsg_set(err, errlen, "negative delay %d ms", ms);
    s->from = s->to = s->state.pose;
    return animate(s, ms, err, errlen);
}

/* Time that passed already (drone_ops.pass_time): hovered at once. */
static int sim_pass_time(drone *d, int ms, char *err, size_t errlen)
{
    sim *s = d->impl;
    double scale = s->opts.time_scale;
    s->opts.time_scale = 0;
    int rc = sim_wait(d, ms, err, errlen);
    s->opts.time_scale = scale;
    return rc;
}

static int sim_hover(drone *d)
{
    (void)d;
    return 0;
}

static int sim_emergency(drone *d)
{
    sim *s = d->impl;
    s->state.flying = false;
    s->state.pose.z = 0;
    return 0;
}

static int sim_get_state(drone *d, drone_state *out)
{
    sim *s = d->impl;
    *out = s->state;
    out->known = DRONE_KNOWN_ALL; /* the model's own numbers */
    return 0;
}

static void sim_destroy(drone *d)
{
    sim *s = d->impl;
    pictures_close(&s->pictures);
    free(s);
}

static const drone_ops sim_ops = {
    .name = "sim",
    .connect = sim_connect,
    .takeoff = sim_takeoff,
    .land = sim_land,
    .move = sim_move,
    .turn = sim_turn,
    .hover = sim_hover,
    .emergency = sim_emergency,
    .get_state = sim_get_state,
    .wait = sim_wait,
    .pass_time = sim_pass_time,
    .destroy = sim_destroy,
};

drone *sim_open(const scene *sc, const sim_options *opts, char *err, size_t errlen)
{
    sim *s = calloc(1, sizeof *s);
    if (!s) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    s->scene = *sc;
    if (opts) s->opts = *opts;
    if (s->opts.time_scale < 0) s->opts.time_scale = 0;
    s->rng = s->opts.seed ^ 0x9e3779b97f4a7c15ull;
    pictures_init(&s->pictures, s->opts.picture_dir, s->opts.max_pictures,
                  s->opts.max_picture_bytes);
    s->battery = sc->battery;
    s->state.battery = sc->battery;
    s->state.pose = sc->start;
    s->state.pose.z = 0;
    s->drone.ops = &sim_ops;
    s->drone.impl = s;
    return &s->drone;
}

void sim_place(drone *d, const drone_pose *pose)
{
    sim *s = d->impl;
    s->state.pose = *pose;
    s->state.flying = true;
}

bool sim_is(const drone *d)
{
    return d && d->ops == &sim_ops;
}

double sim_time_ms(const drone *d)
{
    return ((const sim *)d->impl)->clock_ms;
}

const scene *sim_scene(const drone *d)
{
    return &((const sim *)d->impl)->scene;
}

double sim_box_distance(const double p[3], const scene_object *o)
{
    double lo[3] = {o->x - o->w / 2, o->y - o->d / 2, o->z};
    double hi[3] = {o->x + o->w / 2, o->y + o->d / 2, o->z + o->h};
    double sum = 0;
    for (int i = 0; i < 3; i++) {
        double c = p[i] < lo[i] ? lo[i] : p[i] > hi[i] ? hi[i] : p[i];
        sum += (p[i] - c) * (p[i] - c);
    }
    return sqrt(sum);
}

double sim_distance_to(const drone *d, const char *id)
{
    const sim *s = d->impl;
    const scene_object *o = scene_find(&s->scene, id);
    if (!o) return -1;
    double p[3] = {s->state.pose.x, s->state.pose.y, s->state.pose.z};
    return sim_box_distance(p, o);
}
