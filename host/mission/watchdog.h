/*
 * The watchdog (SPEC §6): the last line behind the sandbox's limits. A
 * thread outside the VM watches one mission at a time and calls FIRE when
 * the mission's VM has not ended
 *
 *  - WATCHDOG_OVERRUN_MS after the sandbox's wall-clock deadline, or
 *  - WATCHDOG_CANCEL_MS after the cancel flag was raised,
 *
 * which only happens when something the sandbox cannot interrupt holds the
 * VM's thread. FIRE runs on the watchdog's thread while the VM's thread may
 * still be stuck: it cancels the sandbox (so that no skill acts if the VM
 * ever comes back), then stops and lands the drone, ends the mission as
 * hung, and tells its front end (`aloft run`/`lua` exit, `aloft serve`
 * marks the drone).
 *
 * Thread-safety: watchdog_watch and watchdog_stop are called from the VM's
 * thread; once FIRE has started they wait until it returned, so a sandbox
 * handed to watchdog_watch stays valid for FIRE.
 */
#ifndef ALOFT_MISSION_WATCHDOG_H
#define ALOFT_MISSION_WATCHDOG_H

#include "sandbox/sandbox.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define WATCHDOG_OVERRUN_MS 2000
/* Within SPEC §7's 1 s a cancel ends a mission on its own; the watchdog
 * steps in after that, so that a signal ends the process within 2 s. */
#define WATCHDOG_CANCEL_MS 1000

typedef enum watchdog_why {
    WATCHDOG_OVERRUN,        /* ran past its wall-clock limit */
    WATCHDOG_CANCEL_IGNORED, /* cancelled, did not stop */
} watchdog_why;

/* SB: the sandbox being watched (already cancelled); WHY as text in MSG. */
typedef void (*watchdog_fire_fn)(void *ud, sandbox *sb, watchdog_why why, const char *msg);

typedef struct watchdog watchdog;

/* Starts the thread. CANCEL (may be NULL) is the mission's cancel flag.
 * NULL with a message when the thread cannot be started. */
watchdog *watchdog_start(watchdog_fire_fn fire, void *ud, atomic_bool *cancel, char *err,
                         size_t errlen);

/* The VM runs SB from now on (its deadline is the sandbox's), or nothing
 * when SB is NULL. */
void watchdog_watch(watchdog *w, sandbox *sb);

/* True once FIRE has run (the mission is hung). */
bool watchdog_fired(watchdog *w);

/* Ends the thread and frees W; returns watchdog_fired. */
bool watchdog_stop(watchdog *w);

struct mission_world;
struct mission_record;

/* What FIRE does for a mission of the lifecycle (host/mission/): stops and
 * lands WORLD's drone (if any) and writes the mission's end as hung in REC
 * (if not NULL), with MSG and what became of the drone; that text goes to
 * OUT, for the front end's report. Returns 0, or -1 when the landing or the
 * record failed (OUT says which). */
int watchdog_end_mission(struct mission_world *world, struct mission_record *rec, const char *msg,
                         char *out, size_t outlen);

#endif
