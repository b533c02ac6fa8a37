/* Plan verification in front of a flight (see gate.h). */
#include "verify/gate.h"

#include "drone/heading.h"
#include "mission/runner.h"

#include <math.h>
#include <string.h>

static void world_sandbox(void *ud, sandbox *sb)
{
    verify_gate *g = ud;
    if (g->cancel_to) g->cancel_to(sb ? sb : g->mission_sb);
}

void verify_gate_mission_sandbox(void *ud, sandbox *sb)
{
    verify_gate *g = ud;
    g->mission_sb = sb;
    if (g->cancel_to) g->cancel_to(sb);
}

int verify_gate_check(void *ud, const char *plan, size_t len, char *why, size_t whylen)
{
    verify_gate *g = ud;
    verify_opts o = g->opts;
    drone_pose here;
    if (g->from && g->from->drone) {
        here = mission_world_pose(g->from);
        o.from = &here;
    }
    o.plan = plan;
    o.plan_len = len;
    o.on_sandbox = world_sandbox;
    o.on_sandbox_ud = g;
    int failed = 0;
    cJSON *rep = verify_plan(&o, &failed, why, whylen);
    if (!rep) return -1;
    if (g->progress) verify_print(g->progress, rep);
    bool stopped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rep, "cancelled"));
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rep, "failed"), 0);
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(w, "world");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(w, "kind");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(w, "reason");
    if (w && cJSON_IsNumber(i) && cJSON_IsString(k) && cJSON_IsString(r))
        snprintf(why, whylen, "verification: %d of %d sampled worlds failed; world %d: %s: %s",
                 failed, o.worlds, i->valueint, k->valuestring, r->valuestring);
    else if (stopped)
        snprintf(why, whylen, "verification cancelled");
    if (!g->reports) g->reports = cJSON_CreateArray();
    cJSON_AddItemToArray(g->reports, rep);
    /* How many failed, for a caller that ranks plans (run --candidates). */
    if (stopped) return -1;
    return failed > 0 ? failed : 0;
}

cJSON *verify_gate_refusal(verify_gate *g, const char *plan, size_t len, const char *error)
{
    mission_report r;
    mission_report_init(&r, plan, len);
    mission_report_error(&r, error);
    const drone_pose *p = &g->opts.scene->start;
    r.has_pose = true; /* where it would have started */
    r.pose = (drone_pose){.x = p->x, .y = p->y, .z = p->z, .yaw = heading_wrap(p->yaw)};
    cJSON *doc = mission_report_json(&r);
    mission_report_free(&r);
    if (doc && g->reports) cJSON_AddItemToObject(doc, "verify", g->reports);
    if (!doc) cJSON_Delete(g->reports);
    g->reports = NULL;
    return doc;
}
