/*
 * Sampled worlds for plan verification: what may differ between the scene
 * as written and the world the drone will meet.
 */
#include "verify/world.h"

#include "drone/heading.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* How far a world may stray from its scene. */
#define WORLD_DROP_P 0.2      /* each object missing */
#define WORLD_JITTER_CM 30.0  /* each object moved up to this far along x and y */
#define WORLD_MAX_MISS 0.3    /* detection miss rate, drawn up to this */
#define WORLD_MAX_NOISE 3.0   /* detection position noise (cm), drawn up to this */
#define WORLD_WIND_SPREAD 0.2 /* the wind's speed, up to this fraction either way */
#define WORLD_WIND_TURN 20.0  /* its heading, up to this many degrees either way */

void verify_world_rng_seed(verify_world_rng *r, uint64_t seed, int i, int stream)
{
    r->state = seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(uint32_t)i << 20) ^ (uint64_t)stream;
    /* Stir once so that nearby seeds start far apart. */
    verify_world_rng_next(r);
}

uint64_t verify_world_rng_next(verify_world_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double verify_world_rng_unit(verify_world_rng *r)
{
    return (double)(verify_world_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static void add_change(cJSON *changes, const char *fmt, const char *name, double a, double b)
{
    char text[160];
    snprintf(text, sizeof text, fmt, name, a, b);
    if (changes) cJSON_AddItemToArray(changes, cJSON_CreateString(text));
}

/* A windy scene's wind varies from world to world (its own stream of
 * draws, so that the other draws stay as they were): the speed within
 * WORLD_WIND_SPREAD of the scene's, the heading within WORLD_WIND_TURN
 * degrees; the gusts themselves are drawn by the simulator from the
 * world's seed. */
static void sample_wind(const scene *base, uint64_t seed, int i, scene *out, cJSON *changes)
{
    const scene_wind *w = &base->wind;
    if (w->speed <= 0 && w->gust <= 0) return;
    verify_world_rng r;
    verify_world_rng_seed(&r, seed, i, 2);
    double speed = round(w->speed * (1 + (verify_world_rng_unit(&r) * 2 - 1) * WORLD_WIND_SPREAD));
    double turn = round((verify_world_rng_unit(&r) * 2 - 1) * WORLD_WIND_TURN);
    out->wind.speed = speed;
    out->wind.heading = heading_wrap(w->heading + turn) + 0.0;
    add_change(changes, "%swind %.0f cm/s toward %.0f", "", out->wind.speed, out->wind.heading);
}

void verify_world_sample(const scene *base, uint64_t seed, int i, scene *out, uint64_t *sim_seed,
                         verify_world_rng *probe, cJSON *changes)
{
    *out = *base;
    verify_world_rng_seed(probe, seed, i, 1);
    if (i == 0) {
        /* The scene as written, with the seed a `run --seed` would use. */
        *sim_seed = seed;
        return;
    }
    verify_world_rng r;
    verify_world_rng_seed(&r, seed, i, 0);
    *sim_seed = verify_world_rng_next(&r);
    int n = 0;
    for (int k = 0; k < base->nobjects; k++) {
        scene_object o = base->objects[k];
        if (verify_world_rng_unit(&r) < WORLD_DROP_P) {
            add_change(changes, "%s removed", o.id, 0, 0);
            continue;
        }
        double dx = round((verify_world_rng_unit(&r) * 2 - 1) * WORLD_JITTER_CM);
        double dy = round((verify_world_rng_unit(&r) * 2 - 1) * WORLD_JITTER_CM);
        dx += 0.0, dy += 0.0; /* no "-0" in the report */
        o.x += dx;
        o.y += dy;
        if (fabs(dx) >= 20 || fabs(dy) >= 20)
            add_change(changes, "%s moved (%+.0f, %+.0f) cm", o.id, dx, dy);
        out->objects[n++] = o;
    }
    out->nobjects = n;
    double miss = verify_world_rng_unit(&r) * WORLD_MAX_MISS;
    double noise = verify_world_rng_unit(&r) * WORLD_MAX_NOISE;
    if (miss > out->noise_miss_rate) {
        out->noise_miss_rate = round(miss * 100) / 100;
        add_change(changes, "%smiss rate %.2f", "", out->noise_miss_rate, 0);
    }
    if (noise > out->noise_position_cm) out->noise_position_cm = round(noise * 10) / 10;
    sample_wind(base, seed, i, out, changes);
}

/* True if the lower-case question Q starts with one of WORDS. */
static bool starts_with_any(const char *q, const char *const *words)
{
    for (; *words; words++)
        if (strncmp(q, *words, strlen(*words)) == 0) return true;
    return false;
}

static bool has_any(const char *q, const char *const *words)
{
    for (; *words; words++)
        if (strstr(q, *words)) return true;
    return false;
}

void verify_world_probe(verify_world_rng *r, const scene *sc, const char *question, char *out,
                        size_t outlen)
{
    char q[256];
    size_t n = 0;
    const char *s = question ? question : "";
    while (*s && isspace((unsigned char)*s))
        s++;
    for (; s[n] && n < sizeof q - 1; n++)
        q[n] = (char)tolower((unsigned char)s[n]);
    q[n] = '\0';
    static const char *const yes_no[] = {"is ",   "are ",  "does ",  "do ",   "can ",    "could ",
                                         "was ",  "were ", "has ",   "have ", "should ", "would ",
                                         "will ", "did ",  "shall ", NULL};
    static const char *const count[] = {"how many", "count", "number of", NULL};
    static const char *const size[] = {"how far", "distance", "how tall", "how high",
                                       "height",  "how wide", "width",    "how big",
                                       "size",    "how long", NULL};
    if (starts_with_any(q, yes_no)) {
        snprintf(out, outlen, "%s", verify_world_rng_unit(r) < 0.5 ? "True" : "False");
    } else if (has_any(q, count)) {
        snprintf(out, outlen, "%d", (int)(verify_world_rng_unit(r) * 6));
    } else if (has_any(q, size)) {
        snprintf(out, outlen, "%.0f", 10 + verify_world_rng_unit(r) * 490);
    } else if (sc->nobjects > 0) {
        const scene_object *o = &sc->objects[verify_world_rng_next(r) % (uint64_t)sc->nobjects];
        snprintf(out, outlen, "%s", verify_world_rng_unit(r) < 0.5 ? o->cls : o->id);
    } else {
        /* Nothing to name: the answer a model gives about an empty view. */
        snprintf(out, outlen, "%s", "False");
    }
}
