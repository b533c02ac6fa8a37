/*
 * Starting and reading tests/fake_llm.py from C tests and benchmarks.
 *
 *   fake_llm f;
 *   fake_llm_start(&f, "{\"responses\":[{\"content\":\"a\"}]}", 0);
 *   ... point an llm_config at f.base_url ...
 *   cJSON *req = fake_llm_request(&f, 0);   // what the server received
 *   fake_llm_stop(&f);
 *
 * The server script is found through $SRC (set by ctest), else next to this
 * file. Everything lives in a private temporary directory.
 */
#ifndef ALOFT_TESTS_FAKE_LLM_H
#define ALOFT_TESTS_FAKE_LLM_H

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct fake_llm {
    pid_t pid;
    int port;
    char dir[64];
    char script[128], port_file[128], log[128];
    char base_url[64];
} fake_llm;

static inline void fake_llm_path(char *out, size_t n)
{
    const char *src = getenv("SRC");
    if (src && *src) {
        snprintf(out, n, "%s/tests/fake_llm.py", src);
        return;
    }
    snprintf(out, n, "%s", __FILE__);
    char *slash = strrchr(out, '/');
    if (slash)
        snprintf(slash + 1, n - (size_t)(slash + 1 - out), "fake_llm.py");
    else
        snprintf(out, n, "fake_llm.py");
}

/* Starts the server with SCRIPT_JSON (see fake_llm.py) and waits for its port
 * (up to 20 s). TOKEN_RATE is the default tokens/s (0 = as fast as possible).
 * Returns 0 or -1 with a message on stderr. */
static inline int fake_llm_start(fake_llm *f, const char *script_json, double token_rate)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/aloft-fake-llm-XXXXXX");
    if (!mkdtemp(f->dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(f->script, sizeof f->script, "%s/script.json", f->dir);
    snprintf(f->port_file, sizeof f->port_file, "%s/port", f->dir);
    snprintf(f->log, sizeof f->log, "%s/requests.jsonl", f->dir);
    FILE *fp = fopen(f->script, "w");
    if (!fp) {
        perror(f->script);
        return -1;
    }
    fputs(script_json, fp);
    fclose(fp);

    char py[1024], rate[32];
    fake_llm_path(py, sizeof py);
    snprintf(rate, sizeof rate, "%g", token_rate);
    char *argv[] = {"/usr/bin/python3", py,           "--script", f->script,
                    "--port-file",      f->port_file, "--log",    f->log,
                    "--token-rate",     rate,         NULL};
    int rc = posix_spawn(&f->pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        fprintf(stderr, "cannot start %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    for (int i = 0; i < 2000; i++) { /* poll, 10 ms steps */
        FILE *pf = fopen(f->port_file, "r");
        if (pf) {
            int ok = fscanf(pf, "%d", &f->port) == 1;
            fclose(pf);
            if (ok) {
                snprintf(f->base_url, sizeof f->base_url, "http://127.0.0.1:%d/v1", f->port);
                return 0;
            }
        }
        int st;
        if (waitpid(f->pid, &st, WNOHANG) == f->pid) {
            fprintf(stderr, "fake_llm.py exited early (status %d)\n", st);
            f->pid = 0;
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "fake_llm.py did not report its port\n");
    return -1;
}

static inline void fake_llm_stop(fake_llm *f)
{
    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        waitpid(f->pid, NULL, 0);
        f->pid = 0;
    }
    unlink(f->script);
    unlink(f->port_file);
    unlink(f->log);
    rmdir(f->dir);
}

/* The requests the server has logged so far, as a JSON array (caller frees). */
static inline cJSON *fake_llm_requests(const fake_llm *f)
{
    cJSON *arr = cJSON_CreateArray();
    FILE *fp = fopen(f->log, "r");
    if (!fp) return arr;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        cJSON *j = cJSON_Parse(line);
        if (j) cJSON_AddItemToArray(arr, j);
    }
    free(line);
    fclose(fp);
    return arr;
}

static inline int fake_llm_count(const fake_llm *f)
{
    cJSON *arr = fake_llm_requests(f);
    int n = cJSON_GetArraySize(arr);
    cJSON_Delete(arr);
    return n;
}

#endif
