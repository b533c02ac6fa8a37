/*
 * The skills' record of a mission as typed data: every skill call (its
 * name, arguments, return value and time) and every refused motion. The
 * dispatch of skills.c fills a skill_journal; the runner hands it to the run
 * report (mission/report.h), whose encoder and the store and web edges turn
 * it into JSON with the encoders below (SPEC §2: "calls" and "violations").
 *
 * A skill_value is a MiniSpec value as it crosses the skill boundary. Lua
 * tables, functions and the like do not cross: such a value keeps only its
 * Lua type name ("table"), which is also what the JSON shows. A string is
 * kept up to its first NUL byte and otherwise byte for byte: invalid UTF-8
 * stays as it came (the JSON carries the same bytes).
 */
#ifndef ALOFT_SKILLS_SKILL_JOURNAL_H
#define ALOFT_SKILLS_SKILL_JOURNAL_H

#include "drone/drone.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum skill_value_kind {
    SKILL_VALUE_NIL = 0,
    SKILL_VALUE_BOOL,
    SKILL_VALUE_INT,
    SKILL_VALUE_NUM,
    SKILL_VALUE_STR,
    SKILL_VALUE_OTHER /* a Lua value that is none of the above: S is its type name */
} skill_value_kind;

typedef struct skill_value {
    skill_value_kind kind;
    bool b;      /* BOOL */
    long long i; /* INT */
    double n;    /* NUM (may be NaN or infinite) */
    char *s;     /* STR: the text; OTHER: the Lua type name; owned, NUL-terminated */
} skill_value;

/* One skill call, in the order calls started (a high-level skill's calls
 * follow its own). */
typedef struct skill_call {
    char *skill; /* the skill's full name; owned */
    skill_value *args;
    int nargs;
    skill_value ret; /* NIL until the call returned (and when it raised) */
    double t_ms;     /* since the mission's start */
} skill_call;

/* A motion refused by the constraints, or a trip of the measured-state
 * watch (skill "monitor", with the measured pose, rounded to whole cm and
 * degrees). */
typedef struct skill_violation {
    char *skill, *reason; /* owned */
    bool has_pose;
    drone_pose pose;
} skill_violation;

typedef struct skill_journal {
    skill_call *calls;
    int ncalls, calls_cap;
    skill_violation *violations;
    int nviolations, violations_cap;
} skill_journal;

/* Values. The setters replace nothing: V must be empty (zeroed or freed). */
void skill_value_free(skill_value *v);
/* Copies TEXT (up to its first NUL) as a STR (OTHER: as a type name).
 * 0, or -1 when out of memory (V is then NIL). */
int skill_value_set_str(skill_value *v, skill_value_kind kind, const char *text);
/* A deep copy of FROM into TO. 0, or -1 when out of memory (TO is NIL). */
int skill_value_copy(skill_value *to, const skill_value *from);

/* Appends a call of SKILL at T_MS taking ownership of ARGS[0..NARGS) (a
 * malloc'd array, or NULL when NARGS is 0). Returns its index, or -1 when
 * out of memory (ARGS is freed then). */
int skill_journal_add_call(skill_journal *l, const char *skill, skill_value *args, int nargs,
                           double t_ms);
/* Sets the return value of call INDEX, taking ownership of RET's contents. */
void skill_journal_set_ret(skill_journal *l, int index, skill_value *ret);
/* Appends a violation; POSE may be NULL (none). 0, or -1 when out of memory. */
int skill_journal_add_violation(skill_journal *l, const char *skill, const char *reason,
                                const drone_pose *pose);
/* Moves FROM's records into TO (TO's own are freed first); FROM is left empty. */
void skill_journal_move(skill_journal *to, skill_journal *from);
void skill_journal_free(skill_journal *l);

/* The encoders (NULL when out of memory): a value (a number the way cJSON
 * writes one: integers without ".0", NaN and infinities as null), a call
 * {"skill","args","ret","t_ms"}, a violation {"skill","reason"[,"pose"]},
 * an array of values, and the journal's two arrays. */
cJSON *skill_value_json(const skill_value *v);
cJSON *skill_values_json(const skill_value *v, int n);
cJSON *skill_call_json(const skill_call *c);
cJSON *skill_violation_json(const skill_violation *v);
cJSON *skill_journal_calls_json(const skill_journal *l);
cJSON *skill_journal_violations_json(const skill_journal *l);

#endif
