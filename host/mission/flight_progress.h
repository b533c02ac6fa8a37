/*
 * The progress printer: a flight sink (flight.h) that writes the lines a
 * user reads while a flight flies, to a terminal's stderr:
 *
 *   mission 12 (recorded in /home/u/.local/share/aloft/aloft.db)
 *   connecting to the Tello at 192.168.10.1:8889        (a note)
 *   [   0.00s] > s('person')                             (a statement ran)
 *   [   1.20s] scan('person') -> True                    (a skill returned)
 *   [   1.20s]   go_to('person') ...                     (a high-level skill started)
 *
 * Times are simulated seconds, or on a real drone the seconds since the
 * mission began. `aloft run` adds it unless --quiet; each line is flushed.
 */
#ifndef ALOFT_MISSION_FLIGHT_PROGRESS_H
#define ALOFT_MISSION_FLIGHT_PROGRESS_H

#include "mission/flight.h"

#include <stdio.h>

typedef struct flight_progress {
    FILE *out;
    double t0_ms; /* the mission's start (clock_now_ms), for a real drone's times */
} flight_progress;

/* The sink printing to OUT; P holds its state and must outlive the flight. */
flight_sink flight_progress_sink(flight_progress *p, FILE *out);

#endif
