/*
 * The one monotonic clock of the program: durations, deadlines and event
 * times (first_action_ms, the store's t_ms, skill wall_ms, Tello timeouts,
 * the watchdog, the sandbox's timeout) all read it, so that times taken in
 * different modules can be compared and subtracted.
 *
 * CLOCK_MONOTONIC: it never jumps when the wall clock is set. Thread-safe.
 */
#ifndef ALOFT_CLOCK_H
#define ALOFT_CLOCK_H

#include <stdint.h>

/* Milliseconds on the monotonic clock (an arbitrary origin). */
double clock_now_ms(void);

/* Nanoseconds on the same clock, for deadlines checked very often. */
uint64_t clock_now_ns(void);

#endif
