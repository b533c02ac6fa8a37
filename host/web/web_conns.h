/*
 * The web server's connections, counted per client so that Stop is always
 * answered (SPEC §13): a client (an IP address) may hold only so many idle
 * connections and so many streams (events, camera), and the whole server
 * only so many of each, below libmicrohttpd's connection limit; the rest of
 * that limit is held back for requests such as Stop.
 *
 * "Idle" is every connection that is not streaming: one still sending its
 * headers or body (slowly, maybe on purpose) or waiting between requests.
 * A new connection is always taken: when its client (or the server) holds
 * the most idle connections allowed, the client's (or the server's) oldest
 * idle one is closed to make room. A stream past a cap is refused (429).
 */
#ifndef ALOFT_WEB_CONNS_H
#define ALOFT_WEB_CONNS_H

#include <stdbool.h>
#include <sys/socket.h>

#define WEB_IDLE_PER_CLIENT 16    /* a browser opens 6 per server */
#define WEB_STREAMS_PER_CLIENT 32 /* two a drone card */
#define WEB_IDLE_MAX 128
#define WEB_STREAMS_MAX 256
#define WEB_CONNS_RESERVE 64 /* connections never taken by idle ones or streams */
#define WEB_CONNS_LIMIT (WEB_IDLE_MAX + WEB_STREAMS_MAX + WEB_CONNS_RESERVE)

typedef struct web_conns web_conns;
typedef struct web_conn web_conn;

web_conns *web_conns_new(void);
void web_conns_free(web_conns *t);

/* A connection was accepted on socket FD from ADDR: returns its entry
 * (NULL when out of memory: it is then not counted), after closing the
 * oldest idle connection its client or the server holds past a cap. */
web_conn *web_conns_opened(web_conns *t, int fd, const struct sockaddr *addr);

/* The connection closed (NULL: nothing). Its socket is still open. */
void web_conns_closed(web_conns *t, web_conn *c);

/* The connection starts a stream: false when its client or the server
 * has the most streams allowed (then it stays idle). */
bool web_conns_stream(web_conns *t, web_conn *c);

/* The connection's request ended: idle again, from now. */
void web_conns_request_done(web_conns *t, web_conn *c);

/* How many connections are counted (idle, streaming). */
void web_conns_count(web_conns *t, int *idle, int *streams);

#endif
