/* Motion skills. Until the simulator lands, they only report that no drone
 * is connected. */
#include "skills/builtin.h"

#include <lauxlib.h>

static int no_drone(lua_State *L, const char *name)
{
    return luaL_error(L, "%s: no drone connected (give a scene with --scene, or --drone)", name);
}

#define NO_DRONE_SKILL(fn, name)                                                                   \
    int fn(skill_ctx *ctx, lua_State *L)                                                           \
    {                                                                                              \
        (void)ctx;                                                                                 \
        return no_drone(L, name);                                                                  \
    }

NO_DRONE_SKILL(skill_move_forward, "move_forward")
NO_DRONE_SKILL(skill_move_backward, "move_backward")
NO_DRONE_SKILL(skill_move_left, "move_left")
NO_DRONE_SKILL(skill_move_right, "move_right")
NO_DRONE_SKILL(skill_move_up, "move_up")
NO_DRONE_SKILL(skill_move_down, "move_down")
NO_DRONE_SKILL(skill_turn_cw, "turn_cw")
NO_DRONE_SKILL(skill_turn_ccw, "turn_ccw")
NO_DRONE_SKILL(skill_delay, "delay")
