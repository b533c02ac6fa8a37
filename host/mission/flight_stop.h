/*
 * The stop handle of a flight (SPEC §7 "Front ends": the lifecycle "gives
 * back a handle that any thread can stop"). A front end owns one per
 * flight and gives it to flight_fly (flight_config.stop); flight_stop then
 * ends the flight from any thread or from a signal handler (Ctrl-C): it
 * raises the flight's cancel flag (the LLM request, the driver's connect
 * and takeoff, the landing give up or hurry) and cancels the sandbox the
 * plan runs in, also one handed over after the stop came.
 *
 * Async-signal-safe: flight_stop uses atomics only. The flight hands its
 * sandbox over with flight_handle_sandbox and takes it back (NULL) before
 * freeing it; the handover waits for a flight_stop that is cancelling the
 * old one, so a stop never touches a freed sandbox.
 */
#ifndef ALOFT_MISSION_FLIGHT_STOP_H
#define ALOFT_MISSION_FLIGHT_STOP_H

#include "sandbox/sandbox.h"

#include <stdatomic.h>
#include <stdbool.h>

typedef struct flight_handle {
    atomic_bool stopped;     /* the flight's cancel flag */
    sandbox *_Atomic target; /* the sandbox a stop cancels, or NULL */
    atomic_int stopping;     /* flight_stop calls between reading and cancelling target */
} flight_handle;

/* Ready for a new flight: not stopped, no sandbox. Not while a flight flies
 * with H. */
void flight_handle_init(flight_handle *h);

/* Stops the flight of H: from any thread, or a signal handler. Idempotent. */
void flight_stop(flight_handle *h);

/* True once flight_stop was called on H (since flight_handle_init). */
bool flight_stopped(const flight_handle *h);

/* The flag flight_stop raises, for the code that polls one (the LLM
 * client, the driver's abort, the watchdog). */
atomic_bool *flight_handle_flag(flight_handle *h);

/* From now on a stop cancels SB (NULL: none); a stop that came already
 * cancels it at once. Waits for a flight_stop still cancelling the sandbox
 * handed over before, so that the caller may free that one after. */
void flight_handle_sandbox(flight_handle *h, sandbox *sb);

#endif
