/* Vision skills. Until the simulator lands, they only report that no camera
 * is connected. */
#include "skills/builtin.h"

#include <lauxlib.h>

static int no_camera(lua_State *L, const char *name)
{
    return luaL_error(L, "%s: no camera connected (give a scene with --scene, or --drone)", name);
}

#define NO_CAMERA_SKILL(fn, name)                                                                  \
    int fn(skill_ctx *ctx, lua_State *L)                                                           \
    {                                                                                              \
        (void)ctx;                                                                                 \
        return no_camera(L, name);                                                                 \
    }

NO_CAMERA_SKILL(skill_is_visible, "is_visible")
NO_CAMERA_SKILL(skill_object_x, "object_x")
NO_CAMERA_SKILL(skill_object_y, "object_y")
NO_CAMERA_SKILL(skill_object_width, "object_width")
NO_CAMERA_SKILL(skill_object_height, "object_height")
NO_CAMERA_SKILL(skill_take_picture, "take_picture")
