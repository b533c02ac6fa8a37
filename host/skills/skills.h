/*
 * Skills at run time: the one path by which Lua code reaches the world.
 *
 * skills_bind makes every skill of the registry a read-only global of the
 * sandbox under its full name (and alias). Each global is a C closure around
 * skills_dispatch, which, for every call:
 *   1. refuses to act on a poisoned or cancelled sandbox;
 *   2. checks the argument count and types against the registry, converting
 *      numbers to int where the skill takes int;
 *   3. records the call (skill, args, return value, time) in its typed
 *      journal (skill_journal.h; a call it cannot record does not run) and
 *      tells the event hook;
 *   4. runs the low-level C function, or the high-level skill's Lua function.
 * Drone motions go through the constraint check inside the low-level skills;
 * there is no other way to reach a driver from Lua.
 */
#ifndef ALOFT_SKILLS_SKILLS_H
#define ALOFT_SKILLS_SKILLS_H

#include "sandbox/sandbox.h"
#include "skills/registry.h"
#include "skills/skill_journal.h"

#include <stdint.h>

#include "drone/drone.h"
#include "vision/objects.h"

struct drone;

/* CALL before a skill acts, RETURN after it returned (a call that raised an
 * error has no RETURN), VIOLATION when skills_violation refused a motion of
 * the skill being called (no args nor ret, reason says why). */
typedef enum skill_event_kind {
    SKILL_EVENT_CALL,
    SKILL_EVENT_RETURN,
    SKILL_EVENT_VIOLATION
} skill_event_kind;

typedef struct skill_event {
    skill_event_kind kind;
    const skill *skill;
    int depth;               /* 0 for calls from the plan, 1+ inside high-level skills */
    const skill_value *args; /* NARGS values (NULL when none) */
    int nargs;
    const skill_value *ret; /* on RETURN: the value (NULL on the other kinds) */
    double t_ms;            /* wall time since skills_bind */
    double sim_ms;          /* simulated time, when a simulator runs */
    const char *reason;     /* on VIOLATION */
} skill_event;

/* Per-mission state the skills act on. Zero-initialise, fill what exists,
 * then skills_bind. Fields left NULL make the skills that need them fail
 * with a clear error. */
typedef struct skill_ctx {
    const skill_registry *reg;
    sandbox *sb;
    struct drone *drone; /* NULL: drone skills fail ("no drone") */

    /* The current camera view: fills OUT with up to MAX objects, returns how
     * many, or -1 with a message. NULL: vision skills fail ("no camera").
     * Called after a motion, it must report a view captured after it ended. */
    int (*observe)(void *ud, vision_object *out, int max, char *err, size_t errlen);
    void *observe_ud;

    /* take_picture: saves the camera's current frame as the mission's next
     * picture, its path into PATH. Returns 0, 1 at the mission's picture
     * cap (nothing written), -1 with a message. NULL: the simulator's
     * drawing if the drone is the simulator, else "no camera". */
    int (*picture)(void *ud, char *path, size_t pathlen, char *err, size_t errlen);
    void *picture_ud;

    /* probe: asks the LLM; writes the answer text to OUT. NULL: probe fails. */
    int (*probe)(void *ud, const char *question, char *out, size_t outlen, char *err,
                 size_t errlen);
    void *probe_ud;

    /* Events for progress output and the store; may be NULL. */
    void (*on_event)(void *ud, const skill_event *ev);
    void *event_ud;

    /* Filled while running: every call in order and every violation.
     * skills_release frees it: take it with skill_journal_move to keep it. */
    skill_journal journal;
    bool replan; /* replan requested (rp) */
    char replan_reason[256];
    double first_action_ms; /* first MOVES/SEES call, -1 until then */
    int depth;
    double t0_ms; /* clock_now_ms() at mission start; 0 = set by skills_bind */
    /* Where high-level skills' Lua runs when the VM is in a worker process
     * (worker/vm.h): called by the dispatch after its checks and record,
     * with the converted arguments at 1..NARGS of L; pushes one value and
     * returns 0, or returns -1 with a message. NULL: in CTX->sb. */
    int (*run_high)(void *ud, lua_State *L, const skill *s, int nargs, char *err, size_t errlen);
    void *run_high_ud;
    void *bindings; /* private to skills.c */
} skill_ctx;

/* Binds every skill of ctx->reg into ctx->sb and runs the lua/ runtime
 * files. A high-level skill's file is loaded on its first call. Returns 0, or
 * -1 with a message. */
int skills_bind(skill_ctx *ctx, char *err, size_t errlen);

/* Runs every lua/NAME.lua runtime file in SB, each becoming the read-only
 * global NAME (skills_bind does it; a worker's VM too). 0, or -1. */
int skills_load_runtime(sandbox *sb, char *err, size_t errlen);

/* Pushes high-level skill S's run function, compiled in SB. 0, or -1. */
int skills_load_run(sandbox *sb, const skill *s, char *err, size_t errlen);

/* Frees what skills_bind allocated in CTX (not the sandbox or registry). */
void skills_release(skill_ctx *ctx);

/* The skill context of a sandbox's Lua state (for C skill functions). */
skill_ctx *skills_ctx(lua_State *L);

/* Records a constraint violation (also sent as an event). */
void skills_violation(skill_ctx *ctx, const char *skill, const char *reason);

/* Records a violation found by the measured-state watch (SPEC §2: skill
 * "monitor", its reason and the measured POSE), also sent as an event whose
 * skill is named "monitor". */
void skills_monitor_violation(skill_ctx *ctx, const char *reason, const drone_pose *pose);

#endif
