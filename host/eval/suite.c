/*
 * Reads the suite's task directories. Every file is parsed up front so that
 * a broken check or scene is refused before any flight costs LLM tokens.
 */
#include "eval/suite.h"

#include "errmsg.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SUITE_MAX_FILE (4u * 1024u * 1024u)

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        errmsg_set(err, errlen, "%s: cannot open", path);
        return NULL;
    }
    char *buf = malloc(SUITE_MAX_FILE + 1);
    size_t n = buf ? fread(buf, 1, SUITE_MAX_FILE + 1, f) : 0;
    bool bad = ferror(f) || n > SUITE_MAX_FILE;
    fclose(f);
    if (!buf || bad) {
        free(buf);
        errmsg_set(err, errlen, "%s: unreadable or larger than %u bytes", path, SUITE_MAX_FILE);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static cJSON *read_json(const char *path, char *err, size_t errlen)
{
    char *text = read_file(path, err, errlen);
    if (!text) return NULL;
    cJSON *doc = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        errmsg_set(err, errlen, "%s: not a JSON object", path);
        return NULL;
    }
    return doc;
}

static bool is_file(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    struct stat st;
    bool yes = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return yes;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of DIR that satisfy KEEP, sorted; NULL-terminated. */
static char **list_dir(const char *dir, bool (*keep)(const char *dir, const char *name), int *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    char **names = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !keep(dir, e->d_name)) continue;
        if (*n + 2 > cap) {
            cap = cap ? cap * 2 : 16;
            char **bigger = realloc(names, (size_t)cap * sizeof *names);
            if (!bigger) break;
            names = bigger;
        }
        names[(*n)++] = strdup(e->d_name);
        names[*n] = NULL;
    }
    closedir(d);
    if (names) qsort(names, (size_t)*n, sizeof *names, cmp_names);
    return names;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static bool is_scene_file(const char *dir, const char *name)
{
    size_t n = strlen(name), k = strlen("scene.json");
    return n >= k && strcmp(name + n - k, "scene.json") == 0 && is_file(dir, name);
}

static bool is_task_dir(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    bool yes = p && is_file(p, "task.txt");
    free(p);
    return yes;
}

static int load_setup(evalsuite_setup *s, const char *dir, const char *file, char *err,
                      size_t errlen)
{
    size_t stem = strlen(file) - strlen("scene.json");
    char *check_name = malloc(stem + strlen("check.json") + 1);
    if (!check_name) return errmsg_set(err, errlen, "out of memory");
    memcpy(check_name, file, stem);
    strcpy(check_name + stem, "check.json");
    s->name = strndup(file, stem > 0 && file[stem - 1] == '.' ? stem - 1 : stem);
    if (s->name && !*s->name) {
        free(s->name);
        s->name = strdup("-");
    }
    s->scene_path = path_join(dir, file);
    char *check_path = path_join(dir, check_name);
    free(check_name);
    int rc = -1;
    if (!s->name || !s->scene_path || !check_path)
        errmsg_set(err, errlen, "out of memory");
    else if ((s->scene = read_json(s->scene_path, err, errlen)) &&
             (s->check = read_json(check_path, err, errlen)))
        rc = 0;
    free(check_path);
    return rc;
}

static char *trimmed(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
    return s;
}

static int load_task(evalsuite_task *t, const char *dir, char *err, size_t errlen)
{
    char *copy = strdup(dir);
    if (!copy) return errmsg_set(err, errlen, "out of memory");
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    const char *base = strrchr(copy, '/');
    t->name = strdup(base ? base + 1 : copy);
    char *task_path = path_join(copy, "task.txt");
    t->text = task_path ? read_file(task_path, err, errlen) : NULL;
    free(task_path);
    int rc = -1, n_files = 0;
    char **files = NULL;
    if (!t->name || !t->text) goto out;
    trimmed(t->text);
    if (!*t->text) {
        errmsg_set(err, errlen, "%s/task.txt: empty", copy);
        goto out;
    }
    files = list_dir(copy, is_scene_file, &n_files);
    if (n_files == 0) {
        errmsg_set(err, errlen, "%s: no scene.json (or NAME.scene.json)", copy);
        goto out;
    }
    t->setups = calloc((size_t)n_files, sizeof *t->setups);
    if (!t->setups) goto out;
    for (; t->n_setups < n_files; t->n_setups++)
        if (load_setup(&t->setups[t->n_setups], copy, files[t->n_setups], err, errlen) != 0) {
            t->n_setups++;
            goto out;
        }
    rc = 0;
out:
    free_names(files, n_files);
    free(copy);
    return rc;
}

static int add_task(evalsuite *s, const char *dir, char *err, size_t errlen)
{
    evalsuite_task *bigger = realloc(s->tasks, (size_t)(s->n_tasks + 1) * sizeof *s->tasks);
    if (!bigger) return errmsg_set(err, errlen, "out of memory");
    s->tasks = bigger;
    memset(&s->tasks[s->n_tasks], 0, sizeof *s->tasks);
    return load_task(&s->tasks[s->n_tasks++], dir, err, errlen);
}

static int add_dir(evalsuite *s, const char *dir, char *err, size_t errlen)
{
    if (is_file(dir, "task.txt")) return add_task(s, dir, err, errlen);
    int n = 0;
    char **names = list_dir(dir, is_task_dir, &n);
    int rc = n > 0 ? 0 : errmsg_set(err, errlen, "%s: not a task directory (no task.txt)", dir);
    for (int i = 0; i < n && rc == 0; i++) {
        char *p = path_join(dir, names[i]);
        rc = p ? add_task(s, p, err, errlen) : errmsg_set(err, errlen, "out of memory");
        free(p);
    }
    free_names(names, n);
    return rc;
}

int evalsuite_load(evalsuite *s, char *const *dirs, int n_dirs, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n_dirs; i++)
        if (add_dir(s, dirs[i], err, errlen) != 0) {
            evalsuite_free(s);
            return -1;
        }
    return 0;
}

void evalsuite_free(evalsuite *s)
{
    for (int i = 0; i < s->n_tasks; i++) {
        evalsuite_task *t = &s->tasks[i];
        for (int k = 0; k < t->n_setups; k++) {
            free(t->setups[k].name);
            free(t->setups[k].scene_path);
            cJSON_Delete(t->setups[k].scene);
            cJSON_Delete(t->setups[k].check);
        }
        free(t->setups);
        free(t->name);
        free(t->text);
    }
    free(s->tasks);
    memset(s, 0, sizeof *s);
}
