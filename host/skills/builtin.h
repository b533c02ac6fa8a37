/*
 * The low-level skills (SPEC §5), implemented in C. The table that registers
 * them, with their arguments and descriptions, is in builtin.c; the functions
 * live by concern:
 *   skills_drone.c   motion and delay (through the constraint check)
 *   skills_vision.c  is_visible, object_x/y/width/height, take_picture
 *   skills_basic.c   log, probe, replan
 */
#ifndef ALOFT_SKILLS_BUILTIN_H
#define ALOFT_SKILLS_BUILTIN_H

#include "skills/registry.h"
#include "skills/skills.h"

/* Defines skill_NAME as FAMILY(ctx, L, "NAME", VALUE): the skills of one
 * family (move_*, turn_*, object_*) differ only in their name, which their
 * errors carry, and one value. */
#define BUILTIN_SKILL(name, family, value)                                                         \
    int skill_##name(skill_ctx *ctx, lua_State *L)                                                 \
    {                                                                                              \
        return family(ctx, L, #name, value);                                                       \
    }

/* Adds the low-level skills, in SPEC §5 order, to REG. */
int builtin_register(skill_registry *reg, char *err, size_t errlen);

int skill_move_forward(skill_ctx *ctx, lua_State *L);
int skill_move_backward(skill_ctx *ctx, lua_State *L);
int skill_move_left(skill_ctx *ctx, lua_State *L);
int skill_move_right(skill_ctx *ctx, lua_State *L);
int skill_move_up(skill_ctx *ctx, lua_State *L);
int skill_move_down(skill_ctx *ctx, lua_State *L);
int skill_turn_cw(skill_ctx *ctx, lua_State *L);
int skill_turn_ccw(skill_ctx *ctx, lua_State *L);
int skill_delay(skill_ctx *ctx, lua_State *L);
/* The drone stops asking CTX's sandbox whether to go on (skills_release):
 * the sandbox may be freed before the drone lands. */
void skills_drone_release(skill_ctx *ctx);

int skill_is_visible(skill_ctx *ctx, lua_State *L);
int skill_object_x(skill_ctx *ctx, lua_State *L);
int skill_object_y(skill_ctx *ctx, lua_State *L);
int skill_object_width(skill_ctx *ctx, lua_State *L);
int skill_object_height(skill_ctx *ctx, lua_State *L);
int skill_take_picture(skill_ctx *ctx, lua_State *L);

int skill_log(skill_ctx *ctx, lua_State *L);
int skill_probe(skill_ctx *ctx, lua_State *L);
int skill_replan(skill_ctx *ctx, lua_State *L);

#endif
