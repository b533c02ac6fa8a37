/* Connections counted per client (see web_conns.h). */
#include "web/web_conns.h"

#include "clock.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct web_conn {
    web_conn *prev, *next; /* oldest first */
    int fd;
    unsigned char client[16]; /* the address: IPv4 mapped into IPv6 */
    uint64_t since_ns;        /* accepted, or its last request ended (clock.h) */
    bool streaming;
    bool evicted; /* shut down, waiting for its close */
};

struct web_conns {
    pthread_mutex_t lock;
    web_conn *head, *tail;
};

web_conns *web_conns_new(void)
{
    web_conns *t = calloc(1, sizeof *t);
    if (t) pthread_mutex_init(&t->lock, NULL);
    return t;
}

void web_conns_free(web_conns *t)
{
    if (!t) return;
    while (t->head) {
        web_conn *c = t->head;
        t->head = c->next;
        free(c);
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static void client_key(const struct sockaddr *addr, unsigned char key[16])
{
    memset(key, 0, 16);
    if (addr && addr->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
    } else if (addr && addr->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
    }
}

/* The oldest idle connection (of CLIENT, or of anyone when NULL) and how
 * many idle ones there are. Evicted ones count no more. */
static web_conn *oldest_idle(web_conns *t, const unsigned char *client, int *count)
{
    web_conn *old = NULL;
    *count = 0;
    for (web_conn *c = t->head; c; c = c->next) {
        if (c->streaming || c->evicted || (client && memcmp(c->client, client, 16) != 0)) continue;
        ++*count;
        if (!old || c->since_ns < old->since_ns) old = c;
    }
    return old;
}

/* Closes C's socket for reading and writing: its thread sees the end and
 * closes it (the socket itself stays open until then, so the number is
 * not reused under us). */
static void evict(web_conn *c)
{
    c->evicted = true;
    shutdown(c->fd, SHUT_RDWR);
}

web_conn *web_conns_opened(web_conns *t, int fd, const struct sockaddr *addr)
{
    web_conn *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->fd = fd;
    client_key(addr, n->client);
    n->since_ns = clock_now_ns();
    pthread_mutex_lock(&t->lock);
    int count;
    web_conn *old = oldest_idle(t, n->client, &count);
    if (count >= WEB_IDLE_PER_CLIENT) evict(old);
    old = oldest_idle(t, NULL, &count);
    if (count >= WEB_IDLE_MAX) evict(old);
    n->prev = t->tail;
    if (t->tail)
        t->tail->next = n;
    else
        t->head = n;
    t->tail = n;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void web_conns_closed(web_conns *t, web_conn *c)
{
    if (!c) return;
    pthread_mutex_lock(&t->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        t->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        t->tail = c->prev;
    pthread_mutex_unlock(&t->lock);
    free(c);
}

bool web_conns_stream(web_conns *t, web_conn *c)
{
    if (!c) return false;
    pthread_mutex_lock(&t->lock);
    int mine = 0, all = 0;
    for (web_conn *o = t->head; o; o = o->next) {
        if (!o->streaming) continue;
        all++;
        if (memcmp(o->client, c->client, 16) == 0) mine++;
    }
    bool ok = c->streaming || (mine < WEB_STREAMS_PER_CLIENT && all < WEB_STREAMS_MAX);
    if (ok) c->streaming = true;
    pthread_mutex_unlock(&t->lock);
    return ok;
}

void web_conns_request_done(web_conns *t, web_conn *c)
{
    if (!c) return;
    pthread_mutex_lock(&t->lock);
    c->streaming = false;
    c->since_ns = clock_now_ns();
    pthread_mutex_unlock(&t->lock);
}

void web_conns_count(web_conns *t, int *idle, int *streams)
{
    *idle = *streams = 0;
    pthread_mutex_lock(&t->lock);
    for (web_conn *c = t->head; c; c = c->next)
        if (c->streaming)
            ++*streams;
        else if (!c->evicted)
            ++*idle;
    pthread_mutex_unlock(&t->lock);
}
