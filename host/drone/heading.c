/*
 * Compass headings (heading.h).
 */
#include "drone/heading.h"

#include <math.h>

double heading_wrap(double deg)
{
    if (!isfinite(deg)) return NAN;
    double r = fmod(deg, 360.0);
    if (r < 0) r += 360.0;
    /* r + 360 rounds to 360 for a tiny negative r. */
    return r >= 360.0 || r == 0 ? 0.0 : r; /* and -0 is 0 */
}

double heading_diff(double a, double b)
{
    double d = heading_wrap(a - b);
    return d > 180.0 ? 360.0 - d : d;
}
