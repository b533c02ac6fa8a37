/*
 * The benchmark suite's setups for the benchmark programs: every
 * examples/benchmark/NN-name/plan.ms with each *scene.json beside it, sorted
 * by scene path.
 */
#ifndef ALOFT_BENCH_SUITE_H
#define ALOFT_BENCH_SUITE_H

#include "cmd/cli.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct setup {
    char scene[1400];
    char *plan;
    size_t plan_len;
    int writes; /* for the benchmark's own use (bench_record: store writes) */
} setup;

static inline int by_name(const void *a, const void *b)
{
    return strcmp(((const setup *)a)->scene, ((const setup *)b)->scene);
}

/* Fills OUT with at most MAX setups under ROOT; returns how many. */
static inline int find_setups(const char *root, setup *out, int max)
{
    int n = 0;
    DIR *d = opendir(root);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char dir[1024], plan_path[1100], err[256];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        snprintf(plan_path, sizeof plan_path, "%s/plan.ms", dir);
        size_t len;
        char *plan = cli_read_input(plan_path, 1 << 20, &len, err, sizeof err);
        if (!plan) continue;
        DIR *t = opendir(dir);
        struct dirent *f;
        bool used = false;
        while (t && (f = readdir(t)) && n < max) {
            size_t l = strlen(f->d_name);
            if (l < 10 || strcmp(f->d_name + l - 10, "scene.json") != 0) continue;
            snprintf(out[n].scene, sizeof out[n].scene, "%s/%s", dir, f->d_name);
            out[n].plan = used ? strdup(plan) : plan;
            out[n].plan_len = len;
            used = true;
            n++;
        }
        if (t) closedir(t);
        if (!used) free(plan);
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, by_name);
    return n;
}

/* Removes the files directly in DIR (the pictures missions took), keeping
 * DIR itself. */
static inline void suite_clean_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') remove(path);
    }
    if (d) closedir(d);
}

#endif
