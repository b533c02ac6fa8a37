/*
 * aloft with one more global for the watchdog's tests: stuck_forever(), a C
 * function that never returns and polls nothing, so that neither the
 * sandbox's hook nor a cancel can end it: only the watchdog (SPEC §6) can.
 * Everything else is aloft itself (host/main.c).
 */
#include "sandbox/sandbox.h"

#include <time.h>

static _Noreturn int stuck_forever(lua_State *L)
{
    (void)L;
    /* nanosleep, not pause: a confined worker (SPEC §6) may sleep, and
     * this must stay stuck there, not die of a forbidden call */
    for (;;) {
        struct timespec t = {1, 0};
        nanosleep(&t, NULL);
    }
}

void sandbox_test_globals(sandbox *sb);
void sandbox_test_globals(sandbox *sb)
{
    sandbox_set_global(sb, "stuck_forever", stuck_forever, NULL);
}

int aloft_main(int argc, char **argv);
#define main aloft_main
#include "../../host/main.c"
#undef main

int main(int argc, char **argv)
{
    return aloft_main(argc, argv);
}
