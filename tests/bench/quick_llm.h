/*
 * A chat-completions server for benchmarks that must measure aloft, not
 * the test double: it answers every request at once with one fixed reply,
 * from a thread per connection, in C. (tests/fake_llm.py, the scripted
 * server of the tests, answers a hundred requests at once one after the
 * other under Python's lock: tens of milliseconds that would hide aloft's
 * own share of a mission's start.)
 *
 *   quick_llm q;
 *   quick_llm_start(&q, "tc(90);->True");   // q.base_url: ".../v1"
 *   ...
 *   quick_llm_stop(&q);
 *
 * Real HTTP/1.1 on 127.0.0.1: a streamed request (its body holds
 * "stream":true) gets the reply as server-sent events (one content chunk,
 * the finish, the usage, [DONE]), any other a JSON completion. Each
 * response ends the connection.
 */
#ifndef ALOFT_BENCH_QUICK_LLM_H
#define ALOFT_BENCH_QUICK_LLM_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct quick_llm {
    int fd;
    pthread_t accept_thread;
    char base_url[64];
    char stream_body[1024], json_body[1024];
} quick_llm;

typedef struct quick_conn {
    quick_llm *q;
    int fd;
} quick_conn;

static inline int quick_llm_send(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads one request (headers and Content-Length body); answers 100
 * Continue when the client waits for it. Returns the body or NULL. */
static inline char *quick_llm_read(int fd)
{
    size_t cap = 1 << 16, len = 0, want = 0;
    char *buf = malloc(cap + 1), *body = NULL;
    bool continued = false;
    while (buf) {
        if (len == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) break;
            buf = grown, cap *= 2;
        }
        ssize_t k = recv(fd, buf + len, cap - len, 0);
        if (k <= 0) break;
        len += (size_t)k;
        buf[len] = '\0';
        char *end = body ? NULL : strstr(buf, "\r\n\r\n");
        if (end) {
            body = end + 4;
            char *cl = strcasestr(buf, "\r\nContent-Length:");
            want = cl ? strtoul(cl + 17, NULL, 10) : 0;
            if (!continued && strcasestr(buf, "\r\nExpect: 100-continue")) {
                continued = true;
                quick_llm_send(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
            }
        }
        if (body && (size_t)(buf + len - body) >= want) {
            memmove(buf, body, want);
            buf[want] = '\0';
            return buf;
        }
    }
    free(buf);
    return NULL;
}

static inline void *quick_llm_conn(void *arg)
{
    quick_conn *c = arg;
    char *req = quick_llm_read(c->fd);
    if (req) {
        bool stream = strstr(req, "\"stream\":true") || strstr(req, "\"stream\": true");
        const char *body = stream ? c->q->stream_body : c->q->json_body;
        char head[256];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n",
                         stream ? "text/event-stream" : "application/json", strlen(body));
        if (quick_llm_send(c->fd, head, (size_t)n) == 0) quick_llm_send(c->fd, body, strlen(body));
        free(req);
    }
    close(c->fd);
    free(c);
    return NULL;
}

static inline void *quick_llm_accept(void *arg)
{
    quick_llm *q = arg;
    for (;;) {
        int fd = accept(q->fd, NULL, NULL);
        if (fd < 0) return NULL; /* closed: stopping */
        quick_conn *c = malloc(sizeof *c);
        pthread_t t;
        if (!c) {
            close(fd);
            continue;
        }
        *c = (quick_conn){q, fd};
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, quick_llm_conn, c)) {
            close(fd);
            free(c);
        }
        pthread_attr_destroy(&at);
    }
}

/* Starts the server answering REPLY (plain text without quotes or
 * backslashes) on a free port. Returns 0 or -1. */
static inline int quick_llm_start(quick_llm *q, const char *reply)
{
    memset(q, 0, sizeof *q);
    snprintf(q->stream_body, sizeof q->stream_body,
             "data: {\"id\":\"q\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
             "\"delta\":{\"role\":\"assistant\",\"content\":\"%s\"},\"finish_reason\":null}]}\n\n"
             "data: {\"id\":\"q\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
             "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
             "data: {\"id\":\"q\",\"object\":\"chat.completion.chunk\",\"choices\":[],"
             "\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":10,\"total_tokens\":110}}"
             "\n\ndata: [DONE]\n\n",
             reply);
    snprintf(q->json_body, sizeof q->json_body,
             "{\"id\":\"q\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
             "\"message\":{\"role\":\"assistant\",\"content\":\"%s\"},\"finish_reason\":"
             "\"stop\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":10,"
             "\"total_tokens\":110}}",
             reply);
    q->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (q->fd < 0 || bind(q->fd, (struct sockaddr *)&a, sizeof a) || listen(q->fd, 1024) ||
        getsockname(q->fd, (struct sockaddr *)&a, &alen)) {
        perror("quick_llm");
        if (q->fd >= 0) close(q->fd);
        return -1;
    }
    snprintf(q->base_url, sizeof q->base_url, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
    if (pthread_create(&q->accept_thread, NULL, quick_llm_accept, q)) {
        close(q->fd);
        return -1;
    }
    return 0;
}

/* Stops accepting (connections under way finish on their own). */
static inline void quick_llm_stop(quick_llm *q)
{
    shutdown(q->fd, SHUT_RDWR);
    close(q->fd);
    pthread_join(q->accept_thread, NULL);
}

#endif
