/*
 * Vision skills: they read the current view through ctx->observe (the
 * simulator's camera or a detector) and look objects up by class or instance
 * id (vision_find). An object that is not in view gives false (SPEC §4).
 */
#include "skills/builtin.h"

#include "drone/constraints.h"
#include "drone/sim.h"

#include <lauxlib.h>

/* Fills OBJS with the current view; raises a clear error without a camera. */
static int view(skill_ctx *ctx, lua_State *L, const char *name, vision_object *objs)
{
    if (!ctx->observe)
        return luaL_error(
            L, "%s: no camera connected (aloft lua flies the simulator with --scene FILE)", name);
    if (!sandbox_alive(ctx->sb)) sandbox_check(L);
    char err[256] = "";
    int n = ctx->observe(ctx->observe_ud, objs, VISION_MAX_OBJECTS, err, sizeof err);
    if (n < 0) return luaL_error(L, "%s: %s", name, err);
    return n;
}

/* The object of the view OBJS (the caller's, so that no thread-local copy
 * costs every thread of the process its size when it starts) named by
 * argument 1. */
static const vision_object *find(skill_ctx *ctx, lua_State *L, const char *name,
                                 vision_object *objs)
{
    const char *obj = luaL_checkstring(L, 1);
    int n = view(ctx, L, name, objs);
    return vision_find(objs, n, obj);
}

int skill_is_visible(skill_ctx *ctx, lua_State *L)
{
    vision_object objs[VISION_MAX_OBJECTS];
    lua_pushboolean(L, find(ctx, L, "is_visible", objs) != NULL);
    return 1;
}

enum { FIELD_X, FIELD_Y, FIELD_W, FIELD_H };

static int field(skill_ctx *ctx, lua_State *L, const char *name, int which)
{
    vision_object objs[VISION_MAX_OBJECTS];
    const vision_object *o = find(ctx, L, name, objs);
    if (!o) {
        lua_pushboolean(L, 0);
        return 1;
    }
    float v = which == FIELD_X ? o->x : which == FIELD_Y ? o->y : which == FIELD_W ? o->w : o->h;
    /* Full precision (the scene description rounds to two places): skills
     * such as approach estimate distance from small changes in size. */
    lua_pushnumber(L, (lua_Number)v);
    return 1;
}

/* The object_* skills declared in builtin.h. */
BUILTIN_SKILL(object_x, field, FIELD_X)
BUILTIN_SKILL(object_y, field, FIELD_Y)
BUILTIN_SKILL(object_width, field, FIELD_W)
BUILTIN_SKILL(object_height, field, FIELD_H)

/* Pictures come from the mission's camera (ctx->picture: the world's
 * eyes, or the simulator's drawing when the simulator is the camera). */
int skill_take_picture(skill_ctx *ctx, lua_State *L)
{
    drone *d = ctx->drone;
    if (d && constraints_is(d)) d = constraints_inner(d);
    if (!ctx->picture && !d)
        return luaL_error(L, "take_picture: no camera connected (give a scene with --scene)");
    if (!ctx->picture && !sim_is(d))
        return luaL_error(L, "take_picture: this drone has no camera connected");
    if (!sandbox_alive(ctx->sb)) sandbox_check(L);
    char path[1024], err[1024];
    int rc = ctx->picture ? ctx->picture(ctx->picture_ud, path, sizeof path, err, sizeof err)
                          : sim_take_picture(d, path, sizeof path, err, sizeof err);
    /* A cap reached is the plan's to handle (False, as a vision skill that
     * sees nothing); a picture that cannot be taken (no frame from the
     * camera, a full disk, a file size limit) ends the mission like any
     * failed skill: the drone lands. */
    if (rc < 0) return luaL_error(L, "take_picture: %s", err);
    if (rc > 0) {
        lua_pushboolean(L, 0);
        return 1;
    }
    lua_pushstring(L, path);
    return 1;
}
