/*
 * Plan verification's jobs in a worker process (see verify_worker.h).
 */
#include "verify/verify_worker.h"

#include "clock.h"
#include "loader/loader.h"
#include "verify/verify_wire.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct vjob {
    uint32_t id;
    frame *req; /* the request: the decoded strings point into it */
    verify_wire_request r;
    void (*send)(frame *);
    pthread_mutex_t mu; /* sb and cancelled, between the job and the reader */
    sandbox *sb;        /* the world's sandbox while its plan runs */
    bool cancelled;
    struct vjob *next;
    frame batch; /* frames not yet sent (FRAME_VBATCH) */
    int batched;
    double flushed_ms;
} vjob;

static pthread_mutex_t jobs_mu = PTHREAD_MUTEX_INITIALIZER;
static vjob *jobs;

/* The registry of the last job, kept for the next one when its user
 * skills are the same text (the built-ins always are): building it again
 * for every verification would cost more than a world. Only job threads
 * use it, one at a time (run_mu). */
static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;
static skill_registry *cached_reg;
static char *cached_key;
static size_t cached_key_len;

static void drop(frame *f)
{
    frame_free(f);
    free(f);
}

/* The user skills of R as one byte string (lengths and texts). */
static char *skills_key(const verify_wire_request *r, size_t *len)
{
    size_t n = 0;
    for (uint32_t i = 0; i < r->nskills; i++)
        n += 2 * sizeof(size_t) + r->skills[i].path_len + r->skills[i].source_len;
    char *k = malloc(n ? n : 1), *p = k;
    if (!k) return NULL;
    for (uint32_t i = 0; i < r->nskills; i++) {
        const verify_wire_skill *s = &r->skills[i];
        memcpy(p, &s->path_len, sizeof s->path_len), p += sizeof s->path_len;
        memcpy(p, &s->source_len, sizeof s->source_len), p += sizeof s->source_len;
        memcpy(p, s->path, s->path_len), p += s->path_len;
        memcpy(p, s->source, s->source_len), p += s->source_len;
    }
    *len = n;
    return k;
}

/* The built-ins and R's user skills, as the host's loader made them (in
 * the same order, so the abbreviations are the same). */
static skill_registry *registry_for(const verify_wire_request *r, char *err, size_t errlen)
{
    size_t klen = 0;
    char *key = skills_key(r, &klen);
    if (!key) return snprintf(err, errlen, "out of memory"), NULL;
    if (cached_reg && klen == cached_key_len && memcmp(key, cached_key, klen) == 0) {
        free(key);
        return cached_reg;
    }
    registry_free(cached_reg);
    free(cached_key);
    cached_reg = NULL, cached_key = NULL;
    skill_registry *reg = registry_new();
    if (!reg || loader_add_builtins(reg, err, errlen)) {
        registry_free(reg);
        free(key);
        return NULL;
    }
    for (uint32_t i = 0; i < r->nskills; i++) {
        const verify_wire_skill *s = &r->skills[i];
        char path[512], msg[512];
        snprintf(path, sizeof path, "%.*s", (int)s->path_len, s->path);
        /* the host loaded it already: one that fails here failed there */
        loader_load_source(reg, path, s->source, s->source_len, false, msg, sizeof msg);
    }
    loader_finalize(reg, NULL, NULL);
    cached_reg = reg, cached_key = key, cached_key_len = klen;
    return reg;
}

static void on_sandbox(void *ud, sandbox *sb)
{
    vjob *j = ud;
    pthread_mutex_lock(&j->mu);
    j->sb = sb;
    if (sb && j->cancelled) sandbox_cancel(sb);
    pthread_mutex_unlock(&j->mu);
}

static bool is_cancelled(vjob *j)
{
    pthread_mutex_lock(&j->mu);
    bool c = j->cancelled;
    pthread_mutex_unlock(&j->mu);
    return c;
}

/* Sends what waits in the batch. */
static void flush(vjob *j)
{
    if (j->batched) j->send(&j->batch);
    frame_start(&j->batch, FRAME_VBATCH, j->id);
    j->batched = 0;
    j->flushed_ms = clock_now_ms();
}

/* Queues frame F for the host. Verdicts go in batches: a verdict each,
 * the host would wake up for every world. A batch leaves when it is big or
 * a few milliseconds old, so the host hears from a worker at least once a
 * world (its watchdog counts the silence) and at once at the end. */
static void queue(vjob *j, frame *f)
{
    frame_header h = f->h;
    h.len = (uint32_t)f->pos;
    unsigned char *one = malloc(sizeof h + f->pos);
    if (!one) _exit(4);
    memcpy(one, &h, sizeof h);
    if (f->pos) memcpy(one + sizeof h, f->buf, f->pos);
    frame_put_text(&j->batch, (const char *)one, sizeof h + f->pos);
    free(one);
    j->batched++;
    if (f->h.type == FRAME_VEND || j->batch.pos >= VERIFY_WIRE_BATCH_BYTES ||
        clock_now_ms() - j->flushed_ms >= VERIFY_WIRE_BATCH_MS)
        flush(j);
}

/* Test-only: a worker whose replies are wrong (verify_worker.h). */
static bool misbehave(vjob *j, frame *out, uint32_t world)
{
    const char *how = getenv("ALOFT_TEST_WORKER");
    if (!how || strncmp(how, "verify-", 7) != 0) return false;
    frame_start(out, FRAME_VWORLD, j->id);
    frame_put_u32(out, strcmp(how, "verify-world") == 0 ? world + 1 : world);
    frame_put_u8(out, strcmp(how, "verify-kind") == 0 ? 99 : VERIFY_OK);
    if (strcmp(how, "verify-extra") == 0) frame_put_u8(out, 0);
    j->send(out);
    return true;
}

/* Flies the job's share of the worlds; the end's kind and message. */
static verify_wire_end fly(vjob *j, const skill_registry *reg, frame *out, char *msg, size_t msglen)
{
    verify_opts o = j->r.opts;
    o.reg = reg;
    o.on_sandbox = on_sandbox;
    o.on_sandbox_ud = j;
    for (uint32_t i = j->r.first; i < (uint32_t)o.worlds; i += j->r.step) {
        if (is_cancelled(j)) return VERIFY_WIRE_CANCELLED;
        if (misbehave(j, out, i)) return VERIFY_WIRE_DONE;
        verify_verdict v;
        cJSON *e = verify_world(&o, (int)i, &v, msg, msglen);
        if (!e) return VERIFY_WIRE_FAILED;
        verify_wire_put_world(out, j->id, e, v.kind);
        cJSON_Delete(e);
        queue(j, out);
        if (v.kind == VERIFY_CANCELLED) return VERIFY_WIRE_CANCELLED;
    }
    return VERIFY_WIRE_DONE;
}

static void forget(vjob *j)
{
    pthread_mutex_lock(&jobs_mu);
    for (vjob **p = &jobs; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    pthread_mutex_unlock(&jobs_mu);
}

static void *job_thread(void *ud)
{
    vjob *j = ud;
    frame out = {0};
    char msg[1024] = "";
    verify_wire_end end = VERIFY_WIRE_FAILED;
    frame_start(&j->batch, FRAME_VBATCH, j->id);
    j->flushed_ms = clock_now_ms();
    pthread_mutex_lock(&run_mu);
    if (verify_wire_get_request(j->req, &j->r, msg, sizeof msg) == 0) {
        const skill_registry *reg = registry_for(&j->r, msg, sizeof msg);
        if (reg) end = fly(j, reg, &out, msg, sizeof msg);
    }
    pthread_mutex_unlock(&run_mu);
    verify_wire_put_end(&out, j->id, end, end == VERIFY_WIRE_FAILED ? msg : "");
    queue(j, &out);
    frame_free(&out);
    frame_free(&j->batch);
    forget(j);
    verify_wire_request_free(&j->r);
    drop(j->req);
    pthread_mutex_destroy(&j->mu);
    free(j);
    return NULL;
}

static vjob *find(uint32_t id)
{
    pthread_mutex_lock(&jobs_mu);
    vjob *j = jobs;
    while (j && j->id != id)
        j = j->next;
    pthread_mutex_unlock(&jobs_mu);
    return j;
}

static void start(frame *f, void (*send)(frame *))
{
    const char *how = getenv("ALOFT_TEST_WORKER");
    if (how && strcmp(how, "hang") == 0) { /* test-only: never answers */
        drop(f);
        return;
    }
    vjob *j = calloc(1, sizeof *j);
    if (!j) _exit(4);
    j->id = f->h.mission, j->req = f, j->send = send;
    pthread_mutex_init(&j->mu, NULL);
    pthread_mutex_lock(&jobs_mu);
    j->next = jobs;
    jobs = j;
    pthread_mutex_unlock(&jobs_mu);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* the VM's C stack: sandbox_check_cstack allows 1 MiB of nesting */
    pthread_attr_setstacksize(&a, 8u * 1024u * 1024u);
    if (pthread_create(&t, &a, job_thread, j)) _exit(5);
    pthread_attr_destroy(&a);
}

bool verify_worker_take(frame *f, void (*send)(frame *))
{
    if (f->h.type == FRAME_VERIFY) {
        if (find(f->h.mission)) _exit(6); /* the host never reuses an id */
        start(f, send);
        return true;
    }
    if (f->h.type != FRAME_CANCEL) return false;
    /* Under jobs_mu: the job cannot end and be freed meanwhile. */
    pthread_mutex_lock(&jobs_mu);
    vjob *j = jobs;
    while (j && j->id != f->h.mission)
        j = j->next;
    if (j) {
        pthread_mutex_lock(&j->mu);
        j->cancelled = true;
        if (j->sb) sandbox_cancel(j->sb);
        pthread_mutex_unlock(&j->mu);
    }
    pthread_mutex_unlock(&jobs_mu);
    if (j) drop(f);
    return j != NULL;
}
