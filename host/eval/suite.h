/*
 * The benchmark suite's tasks on disk (examples/benchmark, SPEC §15): a task
 * directory holds task.txt and one or more setups, scene.json with
 * check.json, or NAME.scene.json with NAME.check.json (as run_suite.py
 * reads them).
 */
#ifndef ALOFT_EVAL_SUITE_H
#define ALOFT_EVAL_SUITE_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct evalsuite_setup {
    char *name;       /* "-" for scene.json, else NAME */
    char *scene_path; /* the scene file, as given to `aloft run --scene` */
    cJSON *scene;     /* its document */
    cJSON *check;     /* the setup's check.json */
} evalsuite_setup;

typedef struct evalsuite_task {
    char *name; /* the directory's base name, e.g. "01-person-behind" */
    char *text; /* task.txt, trimmed */
    evalsuite_setup *setups;
    int n_setups;
} evalsuite_task;

typedef struct evalsuite {
    evalsuite_task *tasks;
    int n_tasks;
} evalsuite;

/* Loads the tasks of DIRS: each is a task directory, or a suite directory
 * whose task directories (those holding task.txt) are taken in name order.
 * Returns 0, or -1 with a message naming the file at fault (nothing kept). */
int evalsuite_load(evalsuite *s, char *const *dirs, int n_dirs, char *err, size_t errlen);

void evalsuite_free(evalsuite *s);

#endif
