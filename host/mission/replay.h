/*
 * Replay (`aloft run --replay ID`): a recorded simulator mission flown again
 * as a new mission, with its scene, seed, run parameters and plan or task,
 * the recorded LLM replies answering instead of an LLM; then its skill
 * calls are compared with the recorded ones.
 */
#ifndef ALOFT_MISSION_REPLAY_H
#define ALOFT_MISSION_REPLAY_H

#include "drone/scene.h"
#include "mission/controller.h"
#include "sandbox/sandbox.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

/* An LLM source for the controller that answers from a recorded mission's
 * replies (store_replay_next) instead of calling an LLM: streamed replies
 * are handed to the delta callback, and a recorded failure fails again the
 * same way. A request the record cannot answer (the re-flight took another
 * path) fails with "replay diverged: ...". REPLAY must outlive the mission. */
mission_llm mission_replay_llm(store_replay *replay);

/* The recorded scene of R's mission as a new scene (malloc'd), or NULL
 * with a message. */
scene *mission_replay_scene(const store_replay *r, char *err, size_t errlen);

/* True when mission ID was flown in the simulator; else false with why. A
 * real drone's mission is not replayed: its skill calls came from the real
 * world, which the simulator cannot fly again. */
bool mission_replay_in_sim(store *s, long long id, char *err, size_t errlen);

#define REPLAY_MAX_SKILL_DIRS 16

/* The run parameters a mission was recorded with (flight_params_json);
 * zero (or -1 for max_replans) where the record says nothing usable. */
typedef struct replay_params {
    bool stream;
    int max_tries, max_replans;
    int candidates; /* run --candidates K, or 0 */
    sandbox_limits limits;
    int max_pictures;
    uint64_t max_picture_bytes;
    const char *skill_dirs[REPLAY_MAX_SKILL_DIRS]; /* point into .json */
    int n_skill_dirs;
    void *json; /* the parsed record: mission_replay_params_free */
} replay_params;

/* Reads the params TEXT (may be NULL) into OUT. */
void mission_replay_params(const char *text, replay_params *out);
void mission_replay_params_free(replay_params *p);

/* Compares the skill calls of mission ID with those of mission OF, the one
 * it replays, except the results of take_picture (the path of the file
 * this flight wrote). 1 when they match, 0 with WHY when not, -1 with WHY
 * when they could not be read. */
int mission_replay_same_calls(store *s, int64_t of, int64_t id, char *why, size_t whylen);

#endif
