/*
 * number_parse_int, the one reading of a whole number that a user types
 * (the drivers' --tello-* and --mavlink-* options, --input-size,
 * --frame-timeout-ms): limits at, inside and outside, and everything
 * strtol alone would let through.
 */
#include "number.h"

#include <stddef.h>

#include "check.h"

/* The value read, or -999 when refused (OUT must then stay as it was). */
static int parsed(const char *s, long lo, long hi)
{
    int v = -999;
    if (number_parse_int(s, lo, hi, &v) < 0) {
        CHECK(v == -999, "'%s' refused but wrote %d", s ? s : "(null)", v);
        return -999;
    }
    return v;
}

int main(void)
{
    CHECK(parsed("1", 1, 65535) == 1, "low limit");
    CHECK(parsed("65535", 1, 65535) == 65535, "high limit");
    CHECK(parsed("2", 1, 65535) == 2 && parsed("65534", 1, 65535) == 65534, "just inside");
    CHECK(parsed("0", 1, 65535) == -999 && parsed("65536", 1, 65535) == -999, "just outside");
    CHECK(parsed("-5", -10, 10) == -5 && parsed("-11", -10, 10) == -999, "negative");
    CHECK(parsed("007", 1, 10) == 7, "leading zeros are decimal");

    CHECK(parsed(NULL, 1, 10) == -999, "NULL");
    CHECK(parsed("", 1, 10) == -999, "empty");
    CHECK(parsed("+5", 1, 10) == -999, "a '+' sign");
    CHECK(parsed(" 5", 1, 10) == -999 && parsed("\t5", 1, 10) == -999, "leading white space");
    CHECK(parsed("5 ", 1, 10) == -999 && parsed("5x", 1, 10) == -999, "trailing text");
    CHECK(parsed("-", 1, 10) == -999 && parsed("x", 1, 10) == -999, "no digits");
    CHECK(parsed("0x10", 1, 100) == -999, "hexadecimal");
    CHECK(parsed("5.0", 1, 10) == -999 && parsed("1e3", 1, 10000) == -999, "not whole");
    CHECK(parsed("99999999999999999999", 1, 2147483647) == -999, "overflow");
    CHECK(parsed("2147483648", 1, 2147483647) == -999, "above int");
    return failures ? 1 : 0;
}
