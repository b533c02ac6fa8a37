/*
 * The safety campaign's generators (issue 15): random MiniSpec plans the
 * checker accepts, random Lua skill scripts and random scenes, each drawn
 * from one stream of choices.
 *
 * The choices come either from a seeded generator (camp_rng_seed: the same
 * seed gives the same text on every machine) or from a fuzzer's bytes
 * (camp_rng_bytes: each byte is one choice, so libFuzzer's mutations edit
 * the structure of what is generated; once the bytes run out every choice
 * is 0, which always picks the shortest way to finish).
 *
 * Included as source by the campaign's test, fuzzer and benchmark
 * (tests/campaign/ is not a library of its own).
 */
#ifndef ALOFT_CAMPAIGN_GEN_H
#define ALOFT_CAMPAIGN_GEN_H

#include "skills/registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct camp_rng {
    uint64_t state;      /* seeded mode */
    const uint8_t *data; /* bytes mode: the choices */
    size_t size, pos;
} camp_rng;

void camp_rng_seed(camp_rng *r, uint64_t seed);
void camp_rng_bytes(camp_rng *r, const uint8_t *data, size_t size);
/* A choice in [0, N) (0 when N is 0). */
unsigned camp_pick(camp_rng *r, unsigned n);
/* True with probability about PERCENT/100. */
bool camp_chance(camp_rng *r, unsigned percent);

/* A growable text (malloc'd; abort on out of memory: a test tool). */
typedef struct camp_text {
    char *s;
    size_t len, cap;
} camp_text;

void camp_text_add(camp_text *t, const char *s);
void camp_text_printf(camp_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void camp_text_free(camp_text *t);

/* The user skills (MiniSpec definitions) the campaign adds to its
 * registry, as skill files' Lua text; NULL-terminated. */
extern const char *const camp_user_skills[];

/* The registry every campaign run uses: the built-in skills plus
 * camp_user_skills. NULL if it cannot be built (message on stderr). */
skill_registry *camp_registry(void);

/* A random MiniSpec plan meant to pass the checker of REG (both dialects,
 * every construct, literals at the edges). MAX_LOOP is the loop count cap. */
void camp_gen_plan(camp_rng *r, const skill_registry *reg, int max_loop, camp_text *out);

/* A random Lua script calling REG's skills (coroutines, pcall, <close>,
 * metamethods, library calls at their limits, odd arguments). */
void camp_gen_lua(camp_rng *r, const skill_registry *reg, camp_text *out);

/* A random scene (SPEC §3 JSON): the start inside the altitude band, a
 * fence, objects, noise and misses, and in some a wind below half the
 * drone's speed (see flight.h). */
void camp_gen_scene(camp_rng *r, camp_text *out);

#endif
