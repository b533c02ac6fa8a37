/*
 * The mission recorder: what a mission does, written to the store (SPEC §12)
 * as it happens. It turns the runner's and the controller's events into
 * store records: skill calls (begin before the skill acts, end after it,
 * with the pose from the world and the simulated and wall time the call
 * took), constraint violations, statements as they start, plans with the
 * checker's verdict, and LLM exchanges.
 *
 * Times: every record is stamped in milliseconds since the recorder's
 * mission began. Pass mission_record_t0_ms as the runner's t0 so that the
 * call times of `run --json` and of `aloft log` are the same numbers.
 *
 * Failures: a write the store refuses (disk full, database gone) is kept as
 * the recorder's error and cancels the sandbox it came from, so the drone
 * stops (hovers) rather than flying on unrecorded; the runner reports it as
 * the mission's error. Later records are skipped, and every later skill
 * call is cancelled before it acts.
 */
#ifndef ALOFT_MISSION_RECORD_H
#define ALOFT_MISSION_RECORD_H

#include "mission/events.h"
#include "mission/memory.h"
#include "mission/world.h"
#include "skills/skills.h"
#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mission_record mission_record;

/* Opens the store at DB (NULL: the default of store_resolve_path), begins a
 * mission described by INFO and returns a recorder that owns both, reading
 * poses from WORLD (may be filled in later). NULL with a message. */
mission_record *mission_record_open(const char *db, const store_mission_info *info,
                                    mission_world *world, char *err, size_t errlen);

/* Begins a mission described by INFO in S, a store shared with other
 * missions (of other threads: store handles serialise their calls) that
 * must outlive the recorder: one connection per process instead of one per
 * mission, with its statements prepared once. The recorder owns the
 * mission, not S. NULL with a message. */
mission_record *mission_record_begin(store *s, const store_mission_info *info, mission_world *world,
                                     char *err, size_t errlen);

/* Ends a mission begun by mission_record_open or _begin with STATUS, the ERROR text
 * (or NULL) and the plan's RESULT (or NULL), closes the store it opened
 * (not a shared one) and frees R.
 * Returns 0, or -1 with a message (the mission is then left running, and
 * the next store_open marks it interrupted). */
int mission_record_close(mission_record *r, store_status status, const char *error,
                         const cJSON *result, char *err, size_t errlen);

/* Writes R's mission's end as hung (STORE_HUNG) with ERROR, from the
 * watchdog's thread while the mission's thread, stuck, still holds R: R
 * stays open (store_mission_mark). Returns 0, or -1 with a message. */
int mission_record_hung(mission_record *r, const char *error, char *err, size_t errlen);

/* The store of a recorder from mission_record_open or _begin, else NULL. */
store *mission_record_store(const mission_record *r);

/* A recorder writing into mission M (which stays the caller's: end it with
 * store_mission_end after mission_record_free), reading poses and simulated
 * time from WORLD (may be NULL: no poses). NULL when out of memory. */
mission_record *mission_record_new(store_mission *m, mission_world *world);
/* Frees R; the mission of mission_record_open or _begin is left running
 * (and the store it opened closed). */
void mission_record_free(mission_record *r);

/* The mission being written. */
store_mission *mission_record_mission(const mission_record *r);

/* When the mission began, on the clock_now_ms() clock. */
double mission_record_t0_ms(const mission_record *r);

/* The first write that failed ("mission store: ..."), or NULL. */
const char *mission_record_error(const mission_record *r);

/* Records one skill event of CTX (CALL, RETURN, VIOLATION); on a failed
 * write, cancels CTX's sandbox. Call it from the skill_ctx.on_event hook. */
void mission_record_skill_event(mission_record *r, skill_ctx *ctx, const skill_event *ev);

/* Remembers the objects of one camera view (N objects of OBJS, seen from
 * the world's current pose) in the store's object memory, each at the
 * position mission/sighting.h estimates; objects whose position the view
 * cannot tell are left out. On a failed write, cancels CTX's sandbox. */
void mission_record_sightings(mission_record *r, skill_ctx *ctx, const vision_object *objs, int n);

/* Records an LLM exchange. The plan recorded next names the last exchange
 * of kind plan, retry or replan as its source. Returns its id, or -1. */
int64_t mission_record_llm(mission_record *r, const store_llm *x);

/* Records a plan as received (LEN bytes of TEXT) with the checker's verdict
 * and diagnostics (or NULL). Returns its number in the mission, or -1. */
int mission_record_plan(mission_record *r, const char *text, size_t len, bool ok,
                        const char *diagnostics);

/* Records that the statement at LINE:COL (LEN bytes of TEXT) of plan
 * PLAN_NO (1, 2, ... in the order plans are recorded; a streamed plan is
 * recorded once it ended, after its first statements) started at T_MS
 * (mission time; negative = now). */
void mission_record_statement(mission_record *r, double t_ms, int plan_no, int line, int col,
                              const char *text, size_t len);

/* The mission controller's observer (controller.h) that records every LLM
 * exchange (the request's messages as a JSON array, the reply, latency,
 * usage, and "STATUS: message" when it failed) with the MODEL asked (or
 * NULL), every plan with the checker's verdict, and every candidate plan
 * (run --candidates). R must outlive the mission. */
mission_observer mission_record_observer(mission_record *r, const char *model);

/* The object memory of R's mission's world, for the controller's planning
 * prompts (mission_opts.memory). R must outlive the mission. */
mission_memory mission_record_memory(mission_record *r);

/* The store's kind of an LLM exchange of kind K. */
store_llm_kind mission_record_llm_kind(mission_llm_kind k);

#endif
