/*
 * The worlds plan verification samples (verify.h): a scene perturbed by a
 * generator seeded with (seed, world index) alone, and the random answers
 * probe gives in them.
 */
#ifndef ALOFT_VERIFY_WORLD_H
#define ALOFT_VERIFY_WORLD_H

#include "drone/scene.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* A small generator (splitmix64): cheap, and the same on every machine. */
typedef struct verify_world_rng {
    uint64_t state;
} verify_world_rng;

/* Seeds R from SEED and the world index I (and a stream number, so that
 * independent draws do not share a sequence). */
void verify_world_rng_seed(verify_world_rng *r, uint64_t seed, int i, int stream);

/* The next 64 random bits; a double in [0, 1). */
uint64_t verify_world_rng_next(verify_world_rng *r);
double verify_world_rng_unit(verify_world_rng *r);

/* World I of SEED: OUT becomes BASE, unchanged for I == 0, else with objects
 * removed or moved and detection noise and misses drawn; *SIM_SEED is the
 * simulator's seed and PROBE is seeded for the world's probe answers. Each
 * change is appended to CHANGES as a short text ("apple_1 removed"). */
void verify_world_sample(const scene *base, uint64_t seed, int i, scene *out, uint64_t *sim_seed,
                         verify_world_rng *probe, cJSON *changes);

/* A random plausible answer to QUESTION in scene SC: "True"/"False" for a
 * yes/no question, a count for "how many", a number for a size or a
 * distance, else an object's name (or class) of SC. */
void verify_world_probe(verify_world_rng *r, const scene *sc, const char *question, char *out,
                        size_t outlen);

#endif
