/*
 * The Tello's state listener: the state string arrives ten times a second
 * on its own port; each packet is parsed, validated where it enters (SPEC
 * §9: a value that is not finite or not in its physical range makes its
 * part of the state unknown, never a number) and folded into the driver's
 * telemetry and pose (see tello.c).
 */
#include "clock.h"
#include "drone/tello_internal.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>

/* Folds one state packet, validated (tello_state_validate), into the
 * telemetry (lock held). A field the packet lacks keeps its last value and
 * makes its part of the state unknown. */
static void telemetry_update(tello *t, const tello_sdk_state *s, double now)
{
    telemetry *tm = &t->tm;
    bool has_yaw = s->fields & TELLO_F_YAW, has_h = s->fields & TELLO_F_H;
    unsigned speeds = TELLO_F_VGX | TELLO_F_VGY | TELLO_F_VGZ;
    double dt = tm->have ? fmin((now - tm->at_ms) / 1e3, 0.5) : 0;
    /* vgx/vgy/vgz come in dm/s; speeds that were not valid count as
     * motion, as the check leans toward "it moved" (see the top). */
    double vh = hypot(s->vgx, s->vgy) * 10, vv = fabs(s->vgz) * 10;
    bool moving = vh > 0 || vv > 0 || (s->fields & speeds) != speeds;
    bool had_yaw = t->have_yaw_ref;
    bool changed = moving || (tm->have && has_h && fabs(s->h - tm->h) >= 5) ||
                   (had_yaw && has_yaw && heading_diff(s->yaw, tm->yaw) >= 2);
    tm->odo_h += vh * dt;
    tm->odo_v += vv * dt;
    /* Summed per packet so that a full 360 counts; changes under 2 degrees
     * are the IMU's jitter while hovering. */
    double dyaw = had_yaw && has_yaw ? heading_diff(s->yaw, tm->yaw) : 0;
    if (dyaw >= 2) tm->odo_yaw += dyaw;
    if (moving) tm->moving++;
    tm->still_run = changed ? 0 : tm->still_run + 1;
    if (has_yaw && !had_yaw) {
        t->yaw_ref = s->yaw;
        t->have_yaw_ref = true;
    }
    /* Between motions the drone's own height and yaw correct the pose: the
     * Tello over- or under-turns a little and holds no exact height. During
     * a motion (and just after, while packets sent before its end arrive)
     * the pose stays the commanded one, so that the heading of the next move
     * is not a snapshot taken mid-turn. */
    if (!t->in_motion && now >= t->settled_ms) {
        if (has_yaw) t->yaw = heading_wrap(t->cfg.start.yaw + s->yaw - t->yaw_ref);
        if (t->flying && has_h) t->z = s->h;
    }
    t->yaw_bad = !has_yaw;
    t->h_bad = !has_h;
    t->bat_bad = !(s->fields & TELLO_F_BAT);
    /* In [0, 100] once validated: the conversion is defined. */
    if (!t->bat_bad) t->battery = (int)lround(s->bat);
    tm->have = true;
    tm->at_ms = now;
    if (has_h) tm->h = s->h;
    if (has_yaw) tm->yaw = s->yaw;
    tm->packets++;
    t->sdk = *s;
}

/* What this packet measured (lock held), for the watch on the measured
 * state (drone_measured): the height and the battery the drone reports. The
 * position is dead-reckoned from the commands (the Tello measures none of
 * its own), which the constraint check judged already: it is not marked
 * known, so the watch does not judge it. */
static drone_state measured(const tello *t, const tello_sdk_state *s)
{
    drone_state st;
    memset(&st, 0, sizeof st);
    st.pose = (drone_pose){t->cfg.start.x + t->x, t->cfg.start.y + t->y,
                           (s->fields & TELLO_F_H) ? s->h : t->z, t->yaw};
    st.battery = t->battery;
    st.known = (t->h_bad ? 0 : DRONE_KNOWN_HEIGHT) |
               (t->bat_bad || t->battery < 0 ? 0 : DRONE_KNOWN_BATTERY);
    st.flying = t->flying;
    return st;
}

void *tello_state_main(void *arg)
{
    tello *t = arg;
    char buf[1500];
    for (;;) {
        pthread_mutex_lock(&t->lock);
        bool stop = t->stopping;
        pthread_mutex_unlock(&t->lock);
        if (stop) return NULL;
        struct pollfd pfd = {.fd = t->state_fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0) continue;
        struct sockaddr_storage src;
        socklen_t srclen = sizeof src;
        ssize_t n = recvfrom(t->state_fd, buf, sizeof buf, 0, (struct sockaddr *)&src, &srclen);
        if (n <= 0 || !tello_link_from_drone(&t->link, &src, false)) continue;
        tello_sdk_state s;
        if (tello_state_parse(buf, (size_t)n, &s) < 0) continue;
        tello_state_validate(&s);
        pthread_mutex_lock(&t->lock);
        telemetry_update(t, &s, clock_now_ms());
        drone_state st = measured(t, &s);
        pthread_mutex_unlock(&t->lock);
        /* Outside the lock: the watch only judges (drone.h), but the
         * guard's thread may be waiting for this lock meanwhile. */
        drone_measured(&t->base, &st);
    }
}

telemetry tello_telemetry_now(tello *t)
{
    pthread_mutex_lock(&t->lock);
    telemetry tm = t->tm;
    pthread_mutex_unlock(&t->lock);
    return tm;
}
