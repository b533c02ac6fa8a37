/*
 * The worker process (SPEC §6): `aloft __worker FD`, started by the host
 * (vm_pool.c), never by a user. It holds Lua states only: one sandbox per
 * mission, each on its own thread, and the skills there are stubs that ask
 * the host through FD. Everything else (drivers, the constraint check, the
 * store, the LLM, files, the network) stays in the host.
 *
 * Test-only: ALOFT_TEST_WORKER=flood makes the worker answer its first
 * work (a mission's first plan or script, or a skill file to read) with a
 * flood of frames, =malformed with a frame header that is not one, =stray
 * with a frame for a mission it does not run (both then fall silent), =hang
 * with silence, and
 * =open, =socket or =execve with that system call after confinement; the
 * tests of the host's defences (tests/test_worker_*.py) set it. Nothing else
 * reads that variable but verification's jobs (verify/verify_worker.h: modes of
 * their own, and =hang).
 */
#ifndef ALOFT_WORKER_WORKER_H
#define ALOFT_WORKER_WORKER_H

#include "worker/frame.h"

#include <stdbool.h>

/* Work of another kind than missions, which this layer does not know:
 * FN is offered every frame the host sends before the missions see it, and
 * takes it (true: F, from malloc, is FN's) or leaves it. SEND writes a frame
 * to the host under the worker's write lock. The program sets it before
 * worker_main (verification's jobs, verify/verify_worker.h). */
typedef bool (*worker_extra_fn)(frame *f, void (*send)(frame *));
void worker_set_extra(worker_extra_fn fn);

/* The worker's main: ARGV[1] is the socket's descriptor. Returns the exit
 * status (0 when the host closed the socket). */
int worker_main(int argc, char **argv);

#endif
