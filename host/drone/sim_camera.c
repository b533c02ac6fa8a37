/*
 * The simulator's camera: a pinhole camera at the drone's position looking
 * along its heading, level with the ground. Each object box is projected by
 * its eight corners; the detection is the projected rectangle clipped to the
 * image, in normalised coordinates (SPEC §11). An object is unseen when it is
 * behind the camera, beyond range, mostly outside the field of view, hidden
 * behind nearer boxes (camera.occlusion), or dropped as a seeded miss.
 */
#include "drone/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAM_NEAR 1.0         /* cm: corners closer than this are clamped */
#define CAM_MIN_VISIBLE 0.25 /* fraction of the box that must be in view */

static uint64_t rng_next(sim *s)
{
    /* xorshift64*: small, fast and the same on every platform. */
    uint64_t x = s->rng ? s->rng : 0x2545f4914f6cdd1dull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

static double rng_uniform(sim *s)
{
    return (rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_gauss(sim *s)
{
    double u1 = rng_uniform(s), u2 = rng_uniform(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* True if every sight line from the camera C to sample points of O passes
 * through another box first. */
static bool occluded(const sim *s, const double c[3], const scene_object *o)
{
    double pts[3][3] = {{o->x, o->y, o->z + o->h / 2},
                        {o->x, o->y, o->z + o->h * 0.9},
                        {o->x, o->y, o->z + o->h * 0.1}};
    for (int k = 0; k < 3; k++) {
        bool blocked = false;
        for (int i = 0; i < s->scene.nobjects && !blocked; i++) {
            const scene_object *b = &s->scene.objects[i];
            if (b == o) continue;
            double t = sim_segment_box(c, pts[k], b, 0);
            blocked = t >= 0 && t < 1;
        }
        if (!blocked) return false;
    }
    return true;
}

/* Projects box O (shifted by OFF) into the image. Returns false if it is not
 * in view; otherwise fills the normalised rectangle. */
static bool project(const sim *s, const scene_object *o, const double off[3], float *x, float *y,
                    float *w, float *h)
{
    const drone_pose *p = &s->state.pose;
    const scene_camera *cam = &s->scene.camera;
    double rad = p->yaw * M_PI / 180;
    double f[2] = {sin(rad), cos(rad)}, r[2] = {cos(rad), -sin(rad)};
    double fx = 0.5 / tan(cam->hfov * M_PI / 360), fy = 0.5 / tan(cam->vfov * M_PI / 360);
    double u0 = 1e9, u1 = -1e9, v0 = 1e9, v1 = -1e9, zmax = -1e9;
    for (int k = 0; k < 8; k++) {
        double wx = o->x + off[0] + ((k & 1) ? o->w / 2 : -o->w / 2) - p->x;
        double wy = o->y + off[1] + ((k & 2) ? o->d / 2 : -o->d / 2) - p->y;
        double wz = o->z + off[2] + ((k & 4) ? o->h : 0) - p->z;
        double X = wx * r[0] + wy * r[1], Y = wz, Z = wx * f[0] + wy * f[1];
        if (Z > zmax) zmax = Z;
        if (Z < CAM_NEAR) Z = CAM_NEAR;
        double u = 0.5 + fx * X / Z, v = 0.5 - fy * Y / Z;
        u0 = fmin(u0, u), u1 = fmax(u1, u), v0 = fmin(v0, v), v1 = fmax(v1, v);
    }
    if (zmax < CAM_NEAR) return false; /* behind the camera */
    double full = (u1 - u0) * (v1 - v0);
    double cu0 = fmax(u0, 0), cu1 = fmin(u1, 1), cv0 = fmax(v0, 0), cv1 = fmin(v1, 1);
    if (cu1 <= cu0 || cv1 <= cv0) return false;
    double seen = (cu1 - cu0) * (cv1 - cv0);
    /* A box that fills the whole view (the drone right in front of it) is
     * still seen even though most of it lies outside the image. */
    if (full > 0 && seen / full < CAM_MIN_VISIBLE && seen < 0.5) return false;
    *x = (float)((cu0 + cu1) / 2), *y = (float)((cv0 + cv1) / 2);
    *w = (float)(cu1 - cu0), *h = (float)(cv1 - cv0);
    return true;
}

int sim_observe(drone *d, vision_object *out, int max)
{
    sim *s = d->impl;
    const drone_pose *p = &s->state.pose;
    double c[3] = {p->x, p->y, p->z};
    int n = 0;
    for (int i = 0; i < s->scene.nobjects && n < max; i++) {
        const scene_object *o = &s->scene.objects[i];
        /* Draw the noise for every object, seen or not, so that one object's
         * visibility never shifts the random numbers of the others. */
        double off[3] = {0, 0, 0}, miss = rng_uniform(s);
        if (s->scene.noise_position_cm > 0)
            for (int k = 0; k < 3; k++)
                off[k] = rng_gauss(s) * s->scene.noise_position_cm;
        double dist = sim_box_distance(c, o);
        if (dist > s->scene.camera.range) continue;
        /* Misses grow with distance: miss_rate at half the range. */
        double pmiss = s->scene.noise_miss_rate * (0.5 + dist / s->scene.camera.range);
        if (miss < pmiss) continue;
        vision_object v;
        memset(&v, 0, sizeof v);
        if (!project(s, o, off, &v.x, &v.y, &v.w, &v.h)) continue;
        if (s->scene.camera.occlusion && occluded(s, c, o)) continue;
        snprintf(v.name, sizeof v.name, "%s", o->id);
        snprintf(v.cls, sizeof v.cls, "%s", o->cls);
        snprintf(v.color, sizeof v.color, "%s", o->color);
        v.conf = (float)fmax(0.3, 0.95 - 0.5 * dist / s->scene.camera.range);
        out[n++] = v;
    }
    return n;
}

int sim_take_picture(drone *d, char *path, size_t pathlen, char *err, size_t errlen)
{
    sim *s = d->impl;
    if (s->opts.discard_pictures)
        return pictures_skip(&s->pictures, "png", path, pathlen, err, errlen);
    vision_object objs[VISION_MAX_OBJECTS];
    int n = sim_observe(d, objs, VISION_MAX_OBJECTS);
    unsigned char *png;
    size_t len;
    if (sim_picture_encode(s->scene.camera.width, s->scene.camera.height, objs, n, &png, &len, err,
                           errlen))
        return -1;
    int rc = pictures_save(&s->pictures, png, len, "png", path, pathlen, err, errlen);
    free(png);
    return rc;
}
