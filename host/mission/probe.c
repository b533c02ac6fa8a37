/*
 * probe for `aloft run --plan` (probe.h): the probe prompt with the
 * current scene, one non-streamed request, the answer trimmed.
 */
#include "mission/probe.h"

#include "llm/prompt.h"
#include "vision/objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scene description of what the world's camera sees now. */
static char *scene_now(mission_world *w)
{
    skill_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    mission_world_attach(w, &ctx);
    vision_object objs[VISION_MAX_OBJECTS];
    char err[256];
    int n =
        ctx.observe ? ctx.observe(ctx.observe_ud, objs, VISION_MAX_OBJECTS, err, sizeof err) : 0;
    if (n < 0) n = 0;
    size_t need = vision_describe(objs, n, NULL, 0) + 1;
    char *out = malloc(need);
    if (out) vision_describe(objs, n, out, need);
    return out;
}

int run_probe_ask(void *ud, const char *question, char *out, size_t outlen, char *err,
                  size_t errlen)
{
    run_probe *p = ud;
    if (!p->cfg.model[0]) {
        snprintf(err, errlen, "no LLM model to ask: give --model NAME or set ALOFT_MODEL");
        return -1;
    }
    prompt_set *ps = prompt_load(p->prompts_dir, err, errlen);
    if (!ps) return -1;
    char *scene = scene_now(p->world);
    if (scene && p->obs.scene) p->obs.scene(p->obs.ud, scene);
    prompt_msgs pm = {0};
    int rc = prompt_probe(ps, question, scene ? scene : "", &pm, err, errlen);
    free(scene);
    prompt_free(ps);
    if (rc) return -1;
    llm_message msgs[2];
    int n = prompt_msgs_to_llm(&pm, msgs);
    llm_request req = {.messages = msgs, .nmessages = n, .cancel = p->cancel};
    llm_config cfg = p->cfg;
    cfg.stream = false; /* a short answer, wanted whole */
    llm_result res;
    rc = llm_call(&cfg, &req, &res);
    p->calls++;
    if (p->obs.llm_exchange) p->obs.llm_exchange(p->obs.ud, MISSION_LLM_PROBE, msgs, n, &res);
    prompt_msgs_free(&pm);
    return probe_reply(rc, &res, out, outlen, err, errlen);
}

int probe_reply(int rc, llm_result *res, char *out, size_t outlen, char *err, size_t errlen)
{
    if (rc)
        snprintf(err, errlen, "the LLM did not answer: %s", res->error);
    else
        llm_result_trimmed(res, out, outlen);
    llm_result_free(res);
    return rc ? -1 : 0;
}
