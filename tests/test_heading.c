/*
 * Compass headings (host/drone/heading.h), at and around their edges: the
 * one rule by which every reported, recorded and compared heading is put in
 * [0, 360) and two headings are compared.
 * labels: tello
 */
#include "drone/heading.h"

#include <math.h>

#include "check.h"

static void test_wrap(void)
{
    static const struct {
        double in, want;
    } cases[] = {
        {0, 0},
        {359.5, 359.5},
        {360, 0},
        {360.5, 0.5},
        {720, 0},
        {-90, 270},
        {-360, 0},
        {-360.5, 359.5},
        {-1e-15, 0},
        {1e-15, 1e-15},
        {3600, 0},
        {-3601, 359},
        {1e300, fmod(1e300, 360)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = heading_wrap(cases[i].in);
        CHECK(got == cases[i].want && got >= 0 && got < 360, "wrap(%g) = %.17g, want %g",
              cases[i].in, got, cases[i].want);
    }
    /* -0 is reported as 0, not "-0". */
    CHECK(!signbit(heading_wrap(-0.0)), "wrap(-0) is +0");
    CHECK(!signbit(heading_wrap(-360.0)), "wrap(-360) is +0");
    CHECK(isnan(heading_wrap(NAN)), "NaN stays NaN");
    CHECK(isnan(heading_wrap(INFINITY)) && isnan(heading_wrap(-INFINITY)), "inf gives NaN");
}

static void test_diff(void)
{
    static const struct {
        double a, b, want;
    } cases[] = {
        {0, 0, 0},     {350, 10, 20},  {10, 350, 20},  {0, 180, 180},
        {180, 0, 180}, {90, 270, 180}, {0, 181, 179},  {-90, 270, 0},
        {720, 0, 0},   {45, -45, 90},  {-1e-15, 0, 0}, {359.9, 0.1, 0.2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = heading_diff(cases[i].a, cases[i].b);
        CHECK(fabs(got - cases[i].want) < 1e-9 && got >= 0 && got <= 180,
              "diff(%g, %g) = %.17g, want %g", cases[i].a, cases[i].b, got, cases[i].want);
    }
    CHECK(isnan(heading_diff(NAN, 0)) && isnan(heading_diff(0, INFINITY)), "NaN in, NaN out");
}

int main(void)
{
    test_wrap();
    test_diff();
    return failures ? 1 : 0;
}
