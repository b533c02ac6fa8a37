/*
 * Motion skills and delay. Every motion goes to ctx->drone, which the
 * mission code makes the constraint guard (host/drone/constraints.h); a
 * refusal makes the skill return false and is recorded as a violation with
 * the guard's or the driver's reason, so the mission controller can replan.
 */
#include "skills/builtin.h"

#include "clock.h"
#include "drone/constraints.h"
#include "drone/drone.h"

#include <lauxlib.h>
#include <time.h>

/* The drone polls this during long motions: cancel and deadline stop it. */
static bool skill_abort(void *ud)
{
    return !sandbox_alive(ud);
}

void skills_drone_release(skill_ctx *ctx)
{
    drone *d = ctx->drone;
    if (d && d->abort == skill_abort && d->abort_ud == ctx->sb) {
        d->abort = NULL;
        d->abort_ud = NULL;
    }
}

static drone *need_drone(skill_ctx *ctx, lua_State *L, const char *name)
{
    if (!ctx->drone)
        luaL_error(L, "%s: no drone connected (aloft lua flies the simulator with --scene FILE)",
                   name);
    if (!sandbox_alive(ctx->sb)) sandbox_check(L);
    ctx->drone->abort = skill_abort;
    ctx->drone->abort_ud = ctx->sb;
    return ctx->drone;
}

/* Finishes a motion: true, or false plus a violation, or the limit error
 * when the motion stopped because the mission was cancelled or timed out. */
static int motion_result(skill_ctx *ctx, lua_State *L, const char *name, int rc, const char *err)
{
    if (rc == 0) {
        lua_pushboolean(L, 1);
        return 1;
    }
    if (!sandbox_alive(ctx->sb)) {
        sandbox_check(L);
        return luaL_error(L, "%s: %s", name, err);
    }
    drone_pose at;
    if (constraints_monitor(ctx->drone, &at))
        skills_monitor_violation(ctx, err, &at);
    else
        skills_violation(ctx, name, err);
    lua_pushboolean(L, 0);
    return 1;
}

static int move(skill_ctx *ctx, lua_State *L, const char *name, drone_dir dir)
{
    drone *d = need_drone(ctx, L, name);
    lua_Integer cm = luaL_checkinteger(L, 1);
    char err[700] = "";
    if (cm < 0 || cm > 100000) {
        skills_violation(ctx, name, "distance must be between 0 and 100000 cm");
        lua_pushboolean(L, 0);
        return 1;
    }
    int rc = d->ops->move(d, dir, (int)cm, err, sizeof err);
    return motion_result(ctx, L, name, rc, err);
}

static int turn(skill_ctx *ctx, lua_State *L, const char *name, int sign)
{
    drone *d = need_drone(ctx, L, name);
    lua_Integer deg = luaL_checkinteger(L, 1);
    char err[700] = "";
    if (deg < -3600 || deg > 3600) {
        skills_violation(ctx, name, "turns are limited to 3600 degrees");
        lua_pushboolean(L, 0);
        return 1;
    }
    int rc = d->ops->turn(d, sign * (int)deg, err, sizeof err);
    return motion_result(ctx, L, name, rc, err);
}

/* The motion skills declared in builtin.h. */
BUILTIN_SKILL(move_forward, move, DRONE_FORWARD)
BUILTIN_SKILL(move_backward, move, DRONE_BACK)
BUILTIN_SKILL(move_left, move, DRONE_LEFT)
BUILTIN_SKILL(move_right, move, DRONE_RIGHT)
BUILTIN_SKILL(move_up, move, DRONE_UP)
BUILTIN_SKILL(move_down, move, DRONE_DOWN)
BUILTIN_SKILL(turn_cw, turn, 1)
BUILTIN_SKILL(turn_ccw, turn, -1)

/* Without a drone, delay still waits (in real time), polling the sandbox. */
static void wait_real(skill_ctx *ctx, lua_State *L, lua_Integer ms)
{
    double t0 = clock_now_ms();
    for (;;) {
        if (!sandbox_alive(ctx->sb)) sandbox_check(L);
        double done = clock_now_ms() - t0;
        if (done >= (double)ms) return;
        double left = (double)ms - done, step = left < 10 ? left : 10;
        struct timespec ts = {0, (long)(step * 1e6)};
        nanosleep(&ts, NULL);
    }
}

int skill_delay(skill_ctx *ctx, lua_State *L)
{
    lua_Integer ms = luaL_checkinteger(L, 1);
    if (ms < 0 || ms > 3600000) return luaL_error(L, "delay: %d ms is not in 0..3600000", (int)ms);
    if (!ctx->drone) {
        wait_real(ctx, L, ms);
        if (!sandbox_alive(ctx->sb)) sandbox_check(L);
        lua_pushboolean(L, 1);
        return 1;
    }
    drone *d = need_drone(ctx, L, "delay");
    char err[700] = "";
    int rc = d->ops->wait(d, (int)ms, err, sizeof err);
    return motion_result(ctx, L, "delay", rc, err);
}
