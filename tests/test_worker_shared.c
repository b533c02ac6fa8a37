/*
 * Many missions in one worker process at once (SPEC §6, the pool): with a
 * pool of one worker, missions on parallel threads call skills as fast as
 * they can, so that the frames of all of them interleave on the one socket
 * and every thread in turn reads frames for the others. Each mission must
 * see exactly its own calls, answered with its own values (a mission whose
 * answer went to another would count wrong or hang), and end well; a
 * mission that raises an error in the middle must not disturb the others.
 *
 * labels: sandbox
 */
#include "loader/loader.h"
#include "mission/runner.h"
#include "worker/vm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define THREADS 6
#define CALLS 1500

static skill_registry *reg;
static char scene_path[600];

typedef struct mission_run {
    int index;
    atomic_int calls, returns;
    sandbox_status st;
    char err[512];
    int opened;
    int logs, foreign; /* its own log lines, and any other */
} mission_run;

static void on_event(void *ud, const skill_event *ev)
{
    mission_run *r = ud;
    if (ev->kind == SKILL_EVENT_CALL) atomic_fetch_add(&r->calls, 1);
    if (ev->kind == SKILL_EVENT_RETURN) atomic_fetch_add(&r->returns, 1);
}

/* Mission I turns (even I) or looks for a zebra (odd I), checking in Lua
 * that each answer is one to its own call (true, or false: an answer that
 * went to a mission of the other kind shows), and logs its own name every
 * tenth call (the host records the logs per mission: a call that went to
 * another shows there). Mission 3 ends with an error a quarter of the way. */
static void *fly(void *ud)
{
    mission_run *r = ud;
    mission_world w = {0};
    sim_options so = {.time_scale = 0, .seed = (unsigned)r->index + 1};
    if (mission_world_sim(&w, scene_path, &so, r->err, sizeof r->err)) return NULL;
    runner_opts o = {.reg = reg, .world = &w, .on_skill_event = on_event, .on_skill_event_ud = r};
    o.limits.max_instructions = 1000000000ull;
    /* a mission left without its answers ends as hung instead of hanging the
     * test: far beyond what the calls take */
    o.limits.timeout_ms = 20000;
    runner_session *s = runner_session_open(&o, r->err, sizeof r->err);
    if (!s) {
        mission_world_close(&w, false);
        return NULL;
    }
    r->opened = 1;
    char code[512];
    snprintf(code, sizeof code,
             "for i = 1, %d do\n"
             "  if i %% 10 == 0 then log('m%d')\n"
             "  elseif %d %% 2 == 0 and turn_cw(%d) ~= true then error('turn: not true')\n"
             "  elseif %d %% 2 == 1 and is_visible('zebra') ~= false then\n"
             "    error('is_visible: not false')\n"
             "  end\n"
             "  if %d == 3 and i == %d then error('stop here') end\n"
             "end\n",
             CALLS, r->index, r->index, r->index + 1, r->index, r->index, CALLS / 4);
    r->st =
        vm_run_script(runner_session_vm(s), code, strlen(code), "=shared", r->err, sizeof r->err);
    mission_report rep;
    mission_report_init(&rep, NULL, 0);
    runner_session_report(s, &rep, r->st == SANDBOX_OK);
    char mine[16];
    snprintf(mine, sizeof mine, "m%d", r->index);
    for (int i = 0; i < rep.logs.n; i++) {
        if (strcmp(rep.logs.s[i], mine) == 0)
            r->logs++;
        else
            r->foreign++;
    }
    mission_report_free(&rep);
    mission_world_close(&w, false);
    return NULL;
}

int main(void)
{
    const char *aloft = getenv("ALOFT");
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    if (!aloft || !*aloft) {
        fprintf(stderr, "test_worker_shared: ALOFT (the aloft program) is not set\n");
        return 1;
    }
    vm_set_worker_program(aloft);
    vm_set_pool_size(1); /* every mission in the one worker */
    snprintf(scene_path, sizeof scene_path, "%s/examples/scenes/office.json", src);
    reg = loader_standard(NULL, 0, NULL, NULL);
    CHECK(reg != NULL, "the standard skills load");
    if (!reg) return 1;
    static mission_run runs[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        runs[i].index = i;
        pthread_create(&t[i], NULL, fly, &runs[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        mission_run *r = &runs[i];
        CHECK(r->opened, "mission %d opened: %s", i, r->err);
        int n = i == 3 ? CALLS / 4 : CALLS;
        if (i == 3) {
            CHECK(r->st == SANDBOX_ERROR && strstr(r->err, "stop here"),
                  "mission 3 ends with its own error: %d %s", (int)r->st, r->err);
        } else {
            CHECK(r->st == SANDBOX_OK, "mission %d ends well: %d %s", i, (int)r->st, r->err);
        }
        CHECK(atomic_load(&r->calls) == n && atomic_load(&r->returns) == n,
              "mission %d made %d calls with %d answers, wanted %d", i, atomic_load(&r->calls),
              atomic_load(&r->returns), n);
        CHECK(r->logs == n / 10 && r->foreign == 0, "mission %d logged %d of its own, %d others", i,
              r->logs, r->foreign);
    }
    registry_free(reg);
    return failures ? 1 : 0;
}
