/*
 * Task-relevant scene descriptions (host/vision/relevance.c): the objects a
 * task concerns come first, the rest are capped at VISION_PROMPT_CAP with a
 * count line; every object a reference plan of the suite names is still in
 * its task's planning description; a crowded view shrinks.
 * labels: vision
 */
#include "check.h"
#include "drone/sim.h"
#include "mission/runner.h"
#include "vision/relevance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vision_object obj(const char *name, const char *cls, const char *color)
{
    vision_object o = {.x = 0.5f, .y = 0.5f, .w = 0.1f, .h = 0.1f, .conf = 1};
    snprintf(o.name, sizeof o.name, "%s", name);
    snprintf(o.cls, sizeof o.cls, "%s", cls);
    snprintf(o.color, sizeof o.color, "%s", color);
    return o;
}

static void words_and_categories(void)
{
    vision_object banana = obj("banana_1", "banana", "yellow");
    vision_object chair = obj("chair_1", "chair", "brown");
    vision_object table = obj("dining table_1", "dining table", "");
    vision_object bottle = obj("bottle_1", "bottle", "green");
    vision_object person = obj("person_2", "person", "");
    CHECK(vision_relevant(&banana, "Can you find something for me to eat?"));
    CHECK(!vision_relevant(&chair, "Can you find something for me to eat?"));
    CHECK(vision_relevant(&bottle, "find something drinkable"));
    CHECK(vision_relevant(&person, "If you can see more than two people"));
    CHECK(vision_relevant(&person, "Go to the PERSON behind you."), "case");
    CHECK(vision_relevant(&chair, "How many chairs are there?"), "plural");
    CHECK(vision_relevant(&table, "The table is on your left."), "last word of a class");
    CHECK(vision_relevant(&banana, "Find something yellow."), "colour");
    CHECK(!vision_relevant(&chair, "Find something yellow."));
    CHECK(vision_relevant(&chair, "Go to the largest item you can see."), "every object");
    CHECK(!vision_relevant(&chair, "chairman"), "whole words only");
    CHECK(!vision_relevant(&chair, ""), "empty task");
    CHECK(!vision_relevant(&chair, NULL), "no task");
    CHECK(vision_relevant(&chair, "\xff\xfe chair\xff"), "invalid UTF-8 around a word");
}

/* N objects, the relevant ones (apples) at the indexes in REL. */
static int view(vision_object *objs, int n, const int *rel, int n_rel)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "vase_%d", i + 1);
        objs[i] = obj(name, "vase", "blue");
    }
    for (int k = 0; k < n_rel; k++) {
        char name[32];
        snprintf(name, sizeof name, "apple_%d", k + 1);
        objs[rel[k]] = obj(name, "apple", "red");
    }
    return n;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void the_cap(void)
{
    vision_object objs[VISION_MAX_OBJECTS];
    char out[16384];
    int none[1] = {0};
    const char *task = "Could you find an apple?";
    /* at the cap, one over, and relevant ones beyond it */
    view(objs, VISION_PROMPT_CAP, none, 0);
    vision_describe_for_task(objs, VISION_PROMPT_CAP, task, out, sizeof out);
    CHECK(lines(out) == VISION_PROMPT_CAP && !strstr(out, "not listed"), "%s", out);
    view(objs, VISION_PROMPT_CAP + 1, none, 0);
    vision_describe_for_task(objs, VISION_PROMPT_CAP + 1, task, out, sizeof out);
    CHECK(lines(out) == VISION_PROMPT_CAP + 1 &&
              strstr(out, "(1 more objects in view not listed)\n"),
          "%s", out);
    int late[2] = {40, 59};
    view(objs, 60, late, 2);
    CHECK(vision_relevant_first(objs, 60, task, VISION_PROMPT_CAP) == VISION_PROMPT_CAP);
    CHECK(strcmp(objs[0].name, "apple_1") == 0 && strcmp(objs[1].name, "apple_2") == 0 &&
              strcmp(objs[2].name, "vase_1") == 0,
          "relevant first, each group in order: %s %s %s", objs[0].name, objs[1].name,
          objs[2].name);
    int many[VISION_PROMPT_CAP + 2];
    for (int i = 0; i < VISION_PROMPT_CAP + 2; i++)
        many[i] = 2 * i;
    view(objs, 60, many, VISION_PROMPT_CAP + 2);
    CHECK(vision_relevant_first(objs, 60, task, VISION_PROMPT_CAP) == VISION_PROMPT_CAP + 2,
          "every relevant object is listed, beyond the cap too");
    /* the needed length, and a short buffer cut and terminated */
    size_t need = vision_describe_for_task(objs, 60, task, NULL, 0);
    size_t got = vision_describe_for_task(objs, 60, task, out, sizeof out);
    CHECK(need == got && strlen(out) == need, "%zu %zu %zu", need, got, strlen(out));
    char small[10];
    vision_describe_for_task(objs, 60, task, small, sizeof small);
    CHECK(strlen(small) < sizeof small);
    CHECK(vision_relevant_first(objs, 0, task, VISION_PROMPT_CAP) == 0);
}

/* The start view of SCENE. */
static int start_view(const char *scene, vision_object *objs)
{
    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1};
    if (mission_world_sim(&w, scene, &so, err, sizeof err)) {
        CHECK(0, "%s: %s", scene, err);
        return 0;
    }
    int n = sim_observe(w.sim, objs, VISION_MAX_OBJECTS);
    mission_world_close(&w, false);
    return n < 0 ? 0 : n;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Every object of the view that the plan names ('apple' or 'person_2') is
 * in the planning description of the task. */
static void suite_views(const char *src)
{
    static const char *const setups[][2] = {
        {"01-person-behind", "scene.json"},      {"02-picture-chair", "scene.json"},
        {"03-count-fruit", "scene.json"},        {"04-largest-item", "scene.json"},
        {"05-yellow-sweet", "scene.json"},       {"06-cutting-paper", "scene.json"},
        {"07-closest-to-chair", "scene.json"},   {"08-find-apple", "scene.json"},
        {"09-leftmost-person", "scene.json"},    {"10-tallest-behind", "scene.json"},
        {"11-eat-or-drink", "apple.scene.json"}, {"11-eat-or-drink", "no-apple.scene.json"},
        {"12-person-with-cup", "scene.json"},
    };
    int named = 0;
    for (size_t s = 0; s < sizeof setups / sizeof *setups; s++) {
        char path[2048], task[1024], plan[8192], desc[16384];
        snprintf(path, sizeof path, "%s/examples/benchmark/%s/task.txt", src, setups[s][0]);
        snprintf(task, sizeof task, "%.1000s", read_text(path));
        snprintf(path, sizeof path, "%s/examples/benchmark/%s/plan.ms", src, setups[s][0]);
        snprintf(plan, sizeof plan, "%s", read_text(path));
        snprintf(path, sizeof path, "%s/examples/benchmark/%s/%s", src, setups[s][0], setups[s][1]);
        vision_object objs[VISION_MAX_OBJECTS];
        int n = start_view(path, objs);
        vision_describe_for_task(objs, n, task, desc, sizeof desc);
        vision_object again[VISION_MAX_OBJECTS];
        start_view(path, again);
        for (int i = 0; i < n; i++) {
            char quoted[128], line[128];
            snprintf(quoted, sizeof quoted, "'%.60s'", again[i].cls);
            bool by_class = strstr(plan, quoted) != NULL;
            snprintf(quoted, sizeof quoted, "'%.60s'", again[i].name);
            if (!by_class && !strstr(plan, quoted)) continue;
            named++;
            snprintf(line, sizeof line, "%.60s x:", again[i].name);
            CHECK(strstr(desc, line) != NULL, "%s: %s named by the plan, not in\n%s", path,
                  again[i].name, desc);
        }
    }
    /* (tasks that turn first name objects behind the start view) */
    CHECK(named >= 8, "the plans name objects in view: %d", named);

    char crowded[2048], full[16384], desc[16384];
    snprintf(crowded, sizeof crowded, "%s/tests/bench/crowded.scene.json", src);
    vision_object objs[VISION_MAX_OBJECTS];
    int n = start_view(crowded, objs);
    CHECK(n > 50, "crowded view: %d objects", n);
    vision_describe(objs, n, full, sizeof full);
    vision_describe_for_task(objs, n, "Could you find an apple? If so, go to it.", desc,
                             sizeof desc);
    CHECK(strncmp(desc, "apple_1 x:", 10) == 0, "the apple first: %.80s", desc);
    CHECK(lines(desc) == VISION_PROMPT_CAP + 1 && strstr(desc, "not listed"), "%s", desc);
    CHECK(strlen(desc) * 3 < strlen(full), "%zu of %zu bytes", strlen(desc), strlen(full));
}

int main(void)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    words_and_categories();
    the_cap();
    suite_views(src);
    return failures ? 1 : 0;
}
