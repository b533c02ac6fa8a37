/*
 * Compass headings (SPEC §3: degrees, 0 faces +y, clockwise): the one place
 * that says how a heading is brought into range and how far apart two are.
 * Every pose the program reports, records or compares goes through these.
 */
#ifndef ALOFT_DRONE_HEADING_H
#define ALOFT_DRONE_HEADING_H

/* DEG as a heading in [0, 360): -90 is 270, 360 and 720 are 0, and a value
 * that rounds up to 360 (-1e-15) is 0. NaN and infinities give NaN. */
double heading_wrap(double deg);

/* How far apart headings A and B are, the short way round: [0, 180].
 * NaN if either is not finite. */
double heading_diff(double a, double b);

#endif
