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
    verify_summary sum;
    cJSON *rep = verify_plan(&o, &sum, why, whylen);
    if (!rep) return -1;
    if (g->progress) verify_print(g->progress, rep);
    if (sum.first_world >= 0)
        snprintf(why, whylen, "verification: %d of %d sampled worlds failed; world %d: %s: %s",
                 sum.failed, o.worlds, sum.first_world, verify_kind_name(sum.first_kind),
                 sum.first_reason);
    else if (sum.cancelled)
        snprintf(why, whylen, "verification cancelled");
    /* The reports go on to the run's document ("verify"). */
    if (!g->reports) g->reports = cJSON_CreateArray();
    cJSON_AddItemToArray(g->reports, rep);
    /* How many failed, for a caller that ranks plans (run --candidates). */
    if (sum.cancelled) return -1;
    return sum.failed;
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
