/*
 * What a flight did, as typed data: the run report of SPEC §2 before it is
 * a document. The runner and the mission controller fill it; a front end
 * encodes it at its edge with mission_report_json (the one encoder of the
 * `run --json` document; `aloft serve`'s end event takes its fields from
 * the same encoding).
 *
 * The plan's result (a MiniSpec value) and the skill calls and violations
 * are the skills' typed records (skills/skill_journal.h), turned into JSON
 * only here, with the journal's encoders; so are the camera's counts and
 * the pictures taken (world.h fills them) and the candidate plans with
 * their cost (candidates.h fills them). No value stays JSON inside.
 */
#ifndef ALOFT_MISSION_REPORT_H
#define ALOFT_MISSION_REPORT_H

#include "drone/drone.h"
#include "skills/skill_journal.h"
#include "vision/pipeline.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A list of strings (logs, plans), each malloc'd. */
typedef struct report_lines {
    char **s;
    int n, cap;
} report_lines;

/* Appends LEN bytes of TEXT; -1 when out of memory. */
int report_lines_add(report_lines *l, const char *text, size_t len);

/* A picture the mission took (take_picture): its file, the camera that
 * took it, its size and where the drone was. */
typedef struct report_picture {
    char *path, *camera; /* owned */
    int width, height;
    drone_pose pose;
} report_picture;

typedef struct report_pictures {
    report_picture *p;
    int n, cap;
} report_pictures;

/* Appends a picture (PATH and CAMERA copied); -1 when out of memory. */
int report_pictures_add(report_pictures *l, const char *path, const char *camera, int width,
                        int height, drone_pose pose);
/* Moves FROM's pictures into TO (TO's own are freed first). */
void report_pictures_move(report_pictures *to, report_pictures *from);
void report_pictures_free(report_pictures *l);

/* A candidate plan as judged (`run --candidates`, candidates.h). */
typedef struct report_candidate {
    int round, index;
    const char *kind;  /* the request it answered (a static name) */
    char *plan;        /* the cleaned plan; owned */
    char *diagnostics; /* why it was not flown, or NULL (null); owned */
    bool accepted;
    int verify_failed; /* worlds failed; -1: not verified, INT_MAX: unknown */
    bool refused;      /* by the verification */
    long tokens;
    bool tokens_estimated, chosen;
} report_candidate;

typedef struct report_candidates {
    report_candidate *c;
    int n, cap;
} report_candidates;

/* Appends a copy of C (its texts copied); -1 when out of memory. */
int report_candidates_add(report_candidates *l, const report_candidate *c);
/* Moves FROM's candidates into TO (TO's own are freed first). */
void report_candidates_move(report_candidates *to, report_candidates *from);
void report_candidates_free(report_candidates *l);

/* What the candidate rounds cost ("candidates_cost"). */
typedef struct report_candidates_cost {
    int k;
    const char *mode; /* a static name */
    int rounds, requests, received;
    long prompt_tokens, completion_tokens, unflown_completion_tokens;
    bool tokens_estimated;
    double llm_ms, judge_ms;
} report_candidates_cost;

typedef struct mission_report {
    bool ok;
    skill_value result; /* the last plan's result when ok (NIL: null); owned */
    char *error;        /* why not ok, or NULL (null); owned */
    report_lines logs;
    bool has_pose; /* false: "pose" is {} (the flight ended before a world) */
    drone_pose pose;
    skill_journal journal; /* "calls" and "violations"; owned */
    report_lines plans;
    int tries, replans, llm_calls;
    double plan_ms;
    double first_action_ms; /* < 0: null (nothing acted) */
    double excursion_cm, exec_ms, total_ms;
    long long prompt_tokens, completion_tokens;
    bool tokens_estimated;   /* "tokens_estimated": true, when set */
    long long cached_tokens; /* "cached_tokens", when > 0 */
    bool has_candidates;     /* "candidates" and "candidates_cost" (run --candidates) */
    report_candidates candidates;
    report_candidates_cost candidates_cost;
    bool has_frames; /* "frames" (the camera's counts), when it had pixels */
    vision_stats frames;
    report_pictures pictures; /* "pictures", when any was taken */
    int64_t mission_id;       /* "mission_id" when > 0 */
} mission_report;

/* Every field at its empty value; PLAN (may be NULL) becomes the single
 * entry of "plans" (and "tries" 1). */
void mission_report_init(mission_report *r, const char *plan, size_t len);

/* Replaces R's error with MSG (copied). */
void mission_report_error(mission_report *r, const char *msg);

/* The pose P, rounded to a tenth, yaw in [0, 360). */
void mission_report_pose(mission_report *r, drone_pose p);

/* The SPEC §2 document of R (R is not changed), NULL if out of memory. */
cJSON *mission_report_json(const mission_report *r);

void mission_report_free(mission_report *r);

#endif
