/*
 * Plan verification inside a worker process (SPEC §6: "Verification runs
 * its simulated worlds wholly inside a worker"). FRAME_VERIFY
 * (verify/verify_wire.h) starts a job on its own thread: the worker builds
 * the skill registry (the built-ins and the user skills' text from the
 * request), then flies its share of the worlds one after the other with
 * verify_world, each a fresh simulator, constraint guard and sandbox in
 * this process: no skill call goes to the host, nothing real is at stake.
 * Each world's verdict goes back as FRAME_VWORLD, the end as FRAME_VEND.
 * FRAME_CANCEL with the job's id stops the world being flown.
 *
 * The aloft program hands verify_worker_take to the worker process
 * (worker_set_extra, worker/worker.h) before its main loop starts.
 *
 * Test-only (ALOFT_TEST_WORKER, see worker/worker.h): =verify-world sends a
 * world the host did not ask for, =verify-kind a verdict that is none,
 * =verify-extra a passing world with bytes after it, =hang nothing at all.
 */
#ifndef ALOFT_VERIFY_VERIFY_WORKER_H
#define ALOFT_VERIFY_VERIFY_WORKER_H

#include "worker/frame.h"

#include <stdbool.h>

/* Takes F when it is verification's (FRAME_VERIFY, or FRAME_CANCEL for a
 * job that runs): returns true and F (allocated with malloc) is the
 * callee's. SEND writes a frame to the host (the worker's writer, which
 * ends the worker when the host is gone). */
bool verify_worker_take(frame *f, void (*send)(frame *));

#endif
