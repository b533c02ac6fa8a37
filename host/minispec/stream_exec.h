/*
 * Runs a streamed plan's events (minispec/stream.h) in a sandbox, statement
 * by statement as they arrive, with the same outcome as running the plan's
 * whole-plan chunk: the rules are the ones stream.h states for controllers.
 *
 * The sandbox must already have the skills and the `minispec` runtime bound
 * (skills_bind does both). Not thread-safe; one executor per plan.
 */
#ifndef ALOFT_MINISPEC_STREAM_EXEC_H
#define ALOFT_MINISPEC_STREAM_EXEC_H

#include "minispec/stream.h"
#include "sandbox/sandbox.h"

typedef struct ms_exec ms_exec;

/* An executor with a fresh variable table in SB. NULL when out of memory. */
ms_exec *ms_exec_new(sandbox *sb);
void ms_exec_free(ms_exec *x);

/* Compiles each statement once per process (sandbox_load_cached) instead of
 * at every run: for verification, which runs the same plan in many worlds. */
void ms_exec_cache_statements(ms_exec *x);

/* Acts on one event (NONE and DONE do nothing). Returns SANDBOX_OK, or the
 * status of a chunk that failed, with its message in ERR; an MS_EV_ERROR
 * event returns SANDBOX_ERROR with the diagnostic as "line:col: message".
 * After a failure the executor runs nothing more. */
sandbox_status ms_exec_event(ms_exec *x, const ms_event *ev, char *err, size_t errlen);

/* True once the plan ended by `->`, `rp`, or a failure. */
bool ms_exec_finished(const ms_exec *x);

/* Pushes the plan's result (nil when it ran to its end without `->`). */
void ms_exec_push_result(ms_exec *x);

/* Statements run so far (loop iterations after the first count once per
 * rest-of-loop chunk). */
int ms_exec_statements_run(const ms_exec *x);

#endif
