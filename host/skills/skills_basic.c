/* log, probe and replan: the skills that talk to the user, the LLM and the
 * mission controller rather than to the drone. */
#include "skills/builtin.h"

#include "skills/probe_answer.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

int skill_log(skill_ctx *ctx, lua_State *L)
{
    size_t len;
    const char *text = lua_tolstring(L, 1, &len);
    sandbox_write(ctx->sb, text, len);
    sandbox_write(ctx->sb, "\n", 1);
    lua_pushboolean(L, 1);
    return 1;
}

int skill_probe(skill_ctx *ctx, lua_State *L)
{
    if (!ctx->probe)
        return luaL_error(L, "probe: no LLM is configured (run a --task mission with an LLM)");
    char answer[2048], err[256];
    if (ctx->probe(ctx->probe_ud, lua_tostring(L, 1), answer, sizeof answer, err, sizeof err))
        return luaL_error(L, "probe: %s", err);
    probe_answer_push(L, answer, strlen(answer));
    return 1;
}

int skill_replan(skill_ctx *ctx, lua_State *L)
{
    ctx->replan = true;
    if (!ctx->replan_reason[0])
        strncpy(ctx->replan_reason, "the plan asked for a new plan (replan)",
                sizeof ctx->replan_reason - 1);
    lua_pushnil(L);
    return 1;
}
