/*
 * Plan verification in worker processes (SPEC §6, §14): what verify_plan
 * does when the VMs of this process run in workers (vm_workers_enabled).
 *
 * The worlds are split between up to one worker per core (ALOFT_WORKERS
 * overrides): worker j of W flies worlds j, j + W, j + 2W ... wholly inside
 * itself (verify/verify_worker.h) and sends back each world's verdict,
 * which the host checks as untrusted input (verify/verify_wire.h) and puts
 * in order. Each world depends on (seed, index) alone, so the report is the
 * one verify_plan makes in this process, whatever the split.
 *
 * The verification workers stay up between verifications (the next one
 * skips their start-up and their building of the skill registry). A worker
 * that dies, says what it may not, or is silent past a world's wall-clock
 * limit + 2 s is killed, and the verification fails with why
 * ("verification failed: the worker crashed (killed by signal 11
 * (SIGSEGV)) while flying world 3"); the host goes on, and the next
 * verification starts a fresh worker.
 */
#ifndef ALOFT_VERIFY_VERIFY_REMOTE_H
#define ALOFT_VERIFY_VERIFY_REMOTE_H

#include "verify/verify.h"

#include <cjson/cJSON.h>

/* verify_plan's contract (verify.h), the worlds flown in workers. O's
 * sandbox hook gets a sandbox of this process whose cancel (Ctrl-C)
 * stops the workers' worlds. */
cJSON *verify_remote_plan(const verify_opts *o, verify_summary *sum, char *err, size_t errlen);

#endif
