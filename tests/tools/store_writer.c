/*
 * store_writer: records one mission event by event through the store API,
 * for tests that kill it mid-way or run several at once on one database.
 *
 *   store_writer --db FILE [--events N] [--delay-ms D] [--task TEXT]
 *
 * Records an LLM exchange and a plan, then N steps of: a statement, a skill
 * call turn_cw([i]) started and completed with the pose after it, and every
 * 10th step a scene snapshot and an object sighting. After each step's call
 * has been committed it prints "call I" (flushed), so whatever a test has
 * read is on disk. Ends the mission as ok and prints
 * "done MISSION_ID max_event_ms=M" (the slowest single write).
 * Exit status 0, or 1 with a message on stderr.
 */
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int fail(const char *what, const char *err)
{
    fprintf(stderr, "store_writer: %s: %s\n", what, err);
    return 1;
}

int main(int argc, char **argv)
{
    const char *db = NULL, *task = "turn in place";
    long events = 100, delay_ms = 0;
    static const struct option opts[] = {{"db", required_argument, 0, 'b'},
                                         {"events", required_argument, 0, 'n'},
                                         {"delay-ms", required_argument, 0, 'd'},
                                         {"task", required_argument, 0, 't'},
                                         {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'b': db = optarg; break;
        case 'n': events = strtol(optarg, NULL, 10); break;
        case 'd': delay_ms = strtol(optarg, NULL, 10); break;
        case 't': task = optarg; break;
        default: return 2;
        }
    }
    if (!db) {
        fprintf(stderr, "usage: store_writer --db FILE [--events N] [--delay-ms D]\n");
        return 2;
    }
    char err[512];
    store *s = store_open(db, 0, err, sizeof err);
    if (!s) return fail("open", err);
    store_mission_info info = {.task = task, .drone = "sim", .model = "fake", .seed = 7};
    store_mission *m = store_mission_begin(s, &info, err, sizeof err);
    if (!m) return fail("begin", err);
    printf("mission %lld\n", (long long)store_mission_id(m));
    fflush(stdout);

    char plan[64];
    snprintf(plan, sizeof plan, "%ld{tc(1)}", events);
    store_llm x = {.kind = STORE_LLM_PLAN,
                   .t_ms = -1,
                   .model = "fake",
                   .prompt = task,
                   .response = plan,
                   .latency_ms = 12.5,
                   .ttft_ms = 3,
                   .prompt_tokens = 100,
                   .completion_tokens = 8};
    int64_t llm = store_record_llm(m, &x, err, sizeof err);
    if (llm < 0) return fail("llm", err);
    int plan_no = store_record_plan(m, -1, llm, plan, true, NULL, err, sizeof err);
    if (plan_no < 0) return fail("plan", err);

    double worst = 0;
    for (long i = 0; i < events; i++) {
        double t0 = now_ms();
        if (store_record_statement(m, -1, plan_no, 1, 4, "tc(1)", err, sizeof err))
            return fail("statement", err);
        double t1 = now_ms();
        char args[32];
        snprintf(args, sizeof args, "[%ld]", i);
        int64_t call = store_call_begin(m, -1, "turn_cw", args, 0, err, sizeof err);
        if (call < 0) return fail("call begin", err);
        double t2 = now_ms();
        store_call_result r = {.ret_json = "true",
                               .has_pose = true,
                               .z = 100,
                               .yaw = (double)(i % 360),
                               .sim_ms = 11,
                               .wall_ms = 0.1};
        if (store_call_end(m, call, &r, err, sizeof err)) return fail("call end", err);
        double t3 = now_ms();
        if (t1 - t0 > worst) worst = t1 - t0;
        if (t2 - t1 > worst) worst = t2 - t1;
        if (t3 - t2 > worst) worst = t3 - t2;
        printf("call %ld\n", i);
        fflush(stdout);
        if (i % 10 == 0) {
            if (store_record_scene(m, -1, "apple_1 x:0.50 y:0.50 width:0.10 height:0.10", true, 0,
                                   0, 100, (double)(i % 360), err, sizeof err))
                return fail("scene", err);
            if (store_record_object(m, "apple", 0, 250, 80, 0.9, err, sizeof err) < 0)
                return fail("object", err);
        }
        if (delay_ms > 0) {
            struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    long long id = (long long)store_mission_id(m);
    if (store_mission_end(m, STORE_OK, NULL, "true", err, sizeof err)) return fail("end", err);
    store_close(s);
    printf("done %lld max_event_ms=%.3f\n", id, worst);
    return 0;
}
