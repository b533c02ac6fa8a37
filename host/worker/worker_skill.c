/*
 * The worker's side of reading a skill file (skill_read.h): the file's
 * top-level chunk runs here, in a fresh sandbox with the budgets the host
 * gave, on a thread of its own (the main thread goes on reading frames),
 * and only the fields it returned go back.
 */
#include "worker/skill_read.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The VM's C stack: sandbox_check_cstack allows 1 MiB of nesting (as a
 * mission's thread, worker.c). */
#define SKILL_READ_STACK (8u * 1024u * 1024u)

static void *read_thread(void *ud)
{
    frame *f = ud;
    sandbox_limits lim = {.max_instructions = frame_get_u64(f),
                          .max_memory = (size_t)frame_get_u64(f),
                          .timeout_ms = frame_get_u64(f)};
    size_t nlen, len;
    const char *name = frame_get_str(f, &nlen);
    const char *src = frame_get_text(f, &len);
    char msg[1024] = "";
    char path[300] = "";
    skill_meta m = {0};
    sandbox_status st = SANDBOX_ERROR;
    if (!frame_done(f) || nlen >= sizeof path || memchr(name, '\0', nlen) || lim.timeout_ms == 0) {
        snprintf(msg, sizeof msg, "a malformed skill read");
    } else {
        memcpy(path, name, nlen);
        st = skill_meta_run_here(path, src, len, &lim, &m, msg, sizeof msg) ? SANDBOX_ERROR
                                                                            : SANDBOX_OK;
    }
    frame out = {0};
    frame_start(&out, FRAME_SKILL_META, f->h.mission);
    frame_put_u8(&out, (uint8_t)st);
    frame_put_str(&out, msg, st == SANDBOX_OK ? 0 : strlen(msg));
    if (st == SANDBOX_OK) skill_meta_put(&out, &m);
    worker_send(&out);
    frame_free(&out);
    skill_meta_free(&m);
    frame_free(f);
    free(f);
    return NULL;
}

void worker_skill_read(frame *f)
{
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, SKILL_READ_STACK);
    if (pthread_create(&t, &a, read_thread, f)) _exit(5);
    pthread_attr_destroy(&a);
}
