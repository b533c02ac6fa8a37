/*
 * Plan verification in worker processes (see verify_remote.h).
 */
#include "verify/verify_remote.h"

#include "clock.h"
#include "errmsg.h"
#include "verify/verify_wire.h"
#include "worker/confine.h"
#include "worker/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define VR_MAX_PROCS 64
/* A worker silent for longer than a world's wall-clock limit and this is
 * hung (SPEC §6: the watchdog acts 2 s past the deadline). */
#define VR_HANG_GRACE_MS 2000
/* How often the host looks at Ctrl-C and the clock while it waits. */
#define VR_POLL_MS 50

typedef struct vproc {
    pid_t pid;
    int fd;
} vproc;

/* Workers waiting for the next verification. */
static pthread_mutex_t idle_mu = PTHREAD_MUTEX_INITIALIZER;
static vproc idle[VR_MAX_PROCS];
static int nidle;
static atomic_uint next_id;

/* One worker's share of a verification. */
typedef struct share {
    vproc p;
    int next;       /* the world it owes next */
    bool ended;     /* FRAME_VEND came */
    bool broken;    /* killed, or not to be trusted again */
    double last_ms; /* its last frame (or the request) */
    verify_wire_end end;
    char msg[1024];
} share;

/* A verification in flight. */
typedef struct vrun {
    const verify_opts *o;
    uint32_t id;
    int nshares;
    share *sh;
    uint8_t *state; /* per world: 0 not flown, then 1 + its verify_kind */
    cJSON **entry;  /* per world: the entry of one that did not pass */
    /* The failing world of the lowest number so far (-1: none), and its
     * verdict: the summary's first failure, when the report reaches it. */
    int first_fail;
    verify_verdict first;
    sandbox *cancel; /* this process's end of Ctrl-C */
    bool cancel_sent;
    double hang_ms;
} vrun;

/* ---- the workers ----------------------------------------------------------- */

static int procs_wanted(int worlds)
{
    int n = vm_default_workers(VR_MAX_PROCS);
    return worlds < n ? worlds : n;
}

/* Kills and reaps P; how it ended into HOW. */
static void discard(vproc *p, char *how, size_t howlen)
{
    int ws = 0;
    kill(p->pid, SIGKILL); /* one that only closed its socket may still run */
    while (waitpid(p->pid, &ws, 0) < 0 && errno == EINTR)
        ;
    close(p->fd);
    if (how) confine_describe_exit(ws, how, howlen);
    p->pid = 0, p->fd = -1;
}

/* An idle worker never sends anything: one whose socket reads is gone. */
static bool still_there(const vproc *p)
{
    struct pollfd pf = {.fd = p->fd, .events = POLLIN | POLLRDHUP};
    return poll(&pf, 1, 0) == 0;
}

static int take(vproc *p, char *err, size_t errlen)
{
    for (;;) {
        pthread_mutex_lock(&idle_mu);
        bool got = nidle > 0;
        if (got) *p = idle[--nidle];
        pthread_mutex_unlock(&idle_mu);
        if (!got) return vm_spawn_worker(&p->pid, &p->fd, err, errlen);
        if (still_there(p)) return 0;
        discard(p, NULL, 0);
    }
}

static void give_back(vproc *p)
{
    pthread_mutex_lock(&idle_mu);
    bool kept = nidle < VR_MAX_PROCS;
    if (kept) idle[nidle++] = *p;
    pthread_mutex_unlock(&idle_mu);
    if (!kept) discard(p, NULL, 0);
}

/* ---- what the workers send ------------------------------------------------- */

/* Ends the verification with a worker's fault: it is killed. -1. */
static int fault(vrun *r, share *s, char *err, size_t errlen, const char *fmt, const char *what)
{
    char how[96];
    discard(&s->p, how, sizeof how);
    s->broken = true;
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what, how);
    return errmsg_set(err, errlen, "verification failed: the worker %s while flying world %d", msg,
                      s->next < r->o->worlds ? s->next : r->o->worlds - 1);
}

static int on_world(vrun *r, share *s, frame *f, char *err, size_t errlen)
{
    verify_verdict v;
    cJSON *e;
    char why[200];
    if (verify_wire_get_world(f, s->next, r->o->worlds, &v, &e, why, sizeof why))
        return fault(r, s, err, errlen, "sent %s: cut off (%s)", why);
    r->state[s->next] = (uint8_t)(1 + v.kind);
    bool failing = v.kind != VERIFY_OK && v.kind != VERIFY_CANCELLED;
    if (failing && (r->first_fail < 0 || s->next < r->first_fail)) {
        r->first_fail = s->next;
        r->first = v;
    }
    r->entry[s->next] = e;
    s->next += r->nshares;
    return 0;
}

static int on_frame(vrun *r, share *s, frame *f, char *err, size_t errlen)
{
    s->last_ms = clock_now_ms();
    if (s->ended || f->h.mission != r->id)
        return fault(r, s, err, errlen, "sent %s: cut off (%s)", "a frame after its end");
    if (f->h.type == FRAME_VWORLD) return on_world(r, s, f, err, errlen);
    if (f->h.type != FRAME_VEND)
        return fault(r, s, err, errlen, "sent %s: cut off (%s)", "a frame of another kind");
    char why[200];
    if (verify_wire_get_end(f, &s->end, s->msg, sizeof s->msg, why, sizeof why))
        return fault(r, s, err, errlen, "sent %s: cut off (%s)", why);
    /* every world of the share, unless it stopped early */
    if (s->end == VERIFY_WIRE_DONE && s->next < r->o->worlds)
        return fault(r, s, err, errlen, "sent %s: cut off (%s)", "its end before its last world");
    s->ended = true;
    if (s->end == VERIFY_WIRE_FAILED)
        return errmsg_set(err, errlen, "verification failed: %s", s->msg);
    return 0;
}

/* The frames of a batch, in order. */
static int on_batch(vrun *r, share *s, frame *b, char *err, size_t errlen)
{
    if (b->h.mission != r->id)
        return fault(r, s, err, errlen, "sent %s: cut off (%s)", "a frame for another request");
    frame inner;
    int rc;
    while ((rc = verify_wire_next_in_batch(b, &inner)) == 1) {
        if (inner.h.type == FRAME_VBATCH)
            return fault(r, s, err, errlen, "sent %s: cut off (%s)", "a batch inside a batch");
        if (on_frame(r, s, &inner, err, errlen)) return -1;
        if (s->ended && b->pos != b->h.len)
            return fault(r, s, err, errlen, "sent %s: cut off (%s)", "a frame after its end");
    }
    if (rc < 0) return fault(r, s, err, errlen, "sent %s: cut off (%s)", "a malformed batch");
    return 0;
}

/* Reads what share S has sent. 0, or -1 with the verification's error. */
static int drain(vrun *r, share *s, frame *f, char *err, size_t errlen)
{
    for (;;) {
        const char *why;
        int rc = frame_recv(s->p.fd, f, 0, &why);
        if (rc == 0) return 0;
        if (rc < 0 && strcmp(why, "the worker closed its end") == 0)
            return fault(r, s, err, errlen, "crashed (%s%s)", "");
        if (rc < 0) return fault(r, s, err, errlen, "sent %s: cut off (%s)", why);
        if (f->h.type == FRAME_VBATCH ? on_batch(r, s, f, err, errlen)
                                      : on_frame(r, s, f, err, errlen))
            return -1;
        if (s->ended) return 0;
    }
}

/* Ctrl-C: each worker stops the world it flies. */
static void pass_cancel(vrun *r)
{
    if (r->cancel_sent || sandbox_alive(r->cancel)) return;
    if (sandbox_poison(r->cancel) != SANDBOX_CANCELLED) return;
    r->cancel_sent = true;
    frame f = {0};
    for (int j = 0; j < r->nshares; j++) {
        if (r->sh[j].ended) continue;
        frame_start(&f, FRAME_CANCEL, r->id);
        frame_send(r->sh[j].p.fd, &f);
    }
    frame_free(&f);
}

/* Waits for every share's end. 0, or -1 with the verification's error. */
static int collect(vrun *r, char *err, size_t errlen)
{
    struct pollfd pf[VR_MAX_PROCS];
    int who[VR_MAX_PROCS];
    frame f = {0};
    int rc = 0;
    for (;;) {
        int n = 0;
        for (int j = 0; j < r->nshares; j++)
            if (!r->sh[j].ended)
                pf[n] = (struct pollfd){.fd = r->sh[j].p.fd, .events = POLLIN}, who[n++] = j;
        if (n == 0) break;
        if (poll(pf, (nfds_t)n, VR_POLL_MS) < 0 && errno != EINTR) {
            rc = errmsg_set(err, errlen, "verification failed: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < n && rc == 0; i++)
            if (pf[i].revents) rc = drain(r, &r->sh[who[i]], &f, err, errlen);
        if (rc) break;
        pass_cancel(r);
        double now = clock_now_ms();
        for (int j = 0; j < r->nshares && rc == 0; j++) {
            share *s = &r->sh[j];
            if (!s->ended && now - s->last_ms > r->hang_ms)
                rc = fault(r, s, err, errlen, "hung: %s (%s)",
                           "no answer past the world's wall-clock limit + 2 s: killed");
        }
        if (rc) break;
    }
    frame_free(&f);
    return rc;
}

/* ---- the report --------------------------------------------------------- */

/* verify_plan's report from the worlds in order: up to the first that was
 * cancelled or not flown. */
static cJSON *report(vrun *r, verify_summary *sum)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *worlds = cJSON_AddNumberToObject(doc, "worlds", 0);
    cJSON_AddNumberToObject(doc, "seed", (double)r->o->seed);
    cJSON *passed = cJSON_AddNumberToObject(doc, "passed", 0);
    cJSON *list = cJSON_AddArrayToObject(doc, "failed");
    int i = 0, npassed = 0, nfailed = 0;
    for (; i < r->o->worlds; i++) {
        int st = r->state[i];
        if (st == 0 || st == 1 + VERIFY_CANCELLED) break;
        if (st == 1 + VERIFY_OK) {
            npassed++;
        } else {
            nfailed++;
            cJSON_AddItemToArray(list, r->entry[i]);
            r->entry[i] = NULL;
        }
    }
    cJSON_SetNumberValue(worlds, i);
    cJSON_SetNumberValue(passed, npassed);
    if (i < r->o->worlds) cJSON_AddBoolToObject(doc, "cancelled", true);
    sum->worlds = i, sum->passed = npassed, sum->failed = nfailed;
    sum->cancelled = i < r->o->worlds;
    /* The lowest failing world of all is the report's first if it is in. */
    if (r->first_fail >= 0 && r->first_fail < i) {
        sum->first_world = r->first_fail;
        sum->first_kind = r->first.kind;
        snprintf(sum->first_reason, sizeof sum->first_reason, "%s", r->first.reason);
    }
    return doc;
}

/* ---- a verification ------------------------------------------------------- */

static int send_requests(vrun *r, char *err, size_t errlen)
{
    frame f = {0};
    int rc = 0;
    for (int j = 0; j < r->nshares && rc == 0; j++) {
        share *s = &r->sh[j];
        s->next = j;
        s->last_ms = clock_now_ms();
        rc = verify_wire_put_request(&f, r->id, r->o, (uint32_t)j, (uint32_t)r->nshares, err,
                                     errlen);
        if (rc == 0 && frame_send(s->p.fd, &f)) rc = fault(r, s, err, errlen, "crashed (%s%s)", "");
    }
    frame_free(&f);
    return rc;
}

static int fly(vrun *r, char *err, size_t errlen)
{
    for (int j = 0; j < r->nshares; j++) {
        if (take(&r->sh[j].p, err, errlen)) {
            r->nshares = j; /* the ones taken go back */
            return -1;
        }
    }
    if (send_requests(r, err, errlen)) return -1;
    return collect(r, err, errlen);
}

cJSON *verify_remote_plan(const verify_opts *o, verify_summary *sum, char *err, size_t errlen)
{
    vrun r = {.o = o, .id = atomic_fetch_add(&next_id, 1) + 1, .first_fail = -1};
    r.nshares = procs_wanted(o->worlds);
    uint64_t world_ms = o->limits.timeout_ms ? o->limits.timeout_ms : SANDBOX_DEFAULT_TIMEOUT_MS;
    r.hang_ms = (double)world_ms + VR_HANG_GRACE_MS;
    /* Ctrl-C's target for the whole verification; its own deadline is
     * past any the workers keep. */
    sandbox_limits cl = {.timeout_ms = (uint64_t)o->worlds * (world_ms + VR_HANG_GRACE_MS)};
    r.sh = calloc((size_t)r.nshares, sizeof *r.sh);
    r.state = calloc((size_t)o->worlds, 1);
    r.entry = calloc((size_t)o->worlds, sizeof *r.entry);
    r.cancel = r.sh && r.state && r.entry ? sandbox_new(&cl, err, errlen) : NULL;
    cJSON *doc = NULL;
    if (r.cancel) {
        if (o->on_sandbox) o->on_sandbox(o->on_sandbox_ud, r.cancel);
        if (fly(&r, err, errlen) == 0) doc = report(&r, sum);
        if (o->on_sandbox) o->on_sandbox(o->on_sandbox_ud, NULL);
        sandbox_free(r.cancel);
    } else if (r.sh && r.state && r.entry) {
        /* sandbox_new said why */
    } else {
        errmsg_set(err, errlen, "out of memory");
    }
    for (int j = 0; r.sh && j < r.nshares; j++) {
        share *s = &r.sh[j];
        if (s->broken || s->p.pid <= 0) continue;
        /* a share that did not end (another failed) may still fly */
        if (s->ended)
            give_back(&s->p);
        else
            discard(&s->p, NULL, 0);
    }
    for (int i = 0; r.entry && i < o->worlds; i++)
        cJSON_Delete(r.entry[i]);
    free(r.entry);
    free(r.state);
    free(r.sh);
    return doc;
}
