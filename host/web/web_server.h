/*
 * The web UI's HTTP server (SPEC §13), on libmicrohttpd: the page, the JSON
 * API, each drone's events as Server-Sent Events and its camera as MJPEG.
 *
 *   GET  /                          the page (web/index.html, embedded)
 *   GET  /app.js, /style.css        its script and style (/favicon.ico: 204)
 *   GET  /api/drones                the drones (web_fleet_json)
 *   POST /api/drones/ID/missions    {"task": "..."}: 202, 409 busy, 400, 404
 *   POST /api/drones/ID/stop        cancels the mission
 *   GET  /api/drones/ID/events      text/event-stream (web_events.h)
 *   GET  /api/drones/ID/camera.mjpg multipart/x-mixed-replace JPEG frames
 *
 * Nothing else is served. What the headers decide (web_guard.h): a foreign
 * Host gets 403 (DNS rebinding), no token when one is set 401, a
 * state-changing request not sent as application/json 415 and one from
 * another site's page 403. Request bodies above WEB_MAX_BODY get 413, a body
 * that is not UTF-8 text 400. One thread per connection: streams block in
 * their own thread and end when the client goes away; idle connections and
 * streams are capped per client (web_conns.h), so that Stop is answered.
 */
#ifndef ALOFT_WEB_SERVER_H
#define ALOFT_WEB_SERVER_H

#include "web/web_fleet.h"

#include <stddef.h>

#define WEB_MAX_BODY (16u * 1024u)
#define WEB_MAX_TASK 4000
#define WEB_FRAME_MS 200 /* 5 camera frames a second */

typedef struct web_server web_server;

typedef struct web_server_options {
    const char *host;     /* an IPv4 or IPv6 address */
    int port;             /* 0: any free port */
    const char *token;    /* asked of every request; NULL: none */
    const char *tls_cert; /* PEM text of the certificate and key: https */
    const char *tls_key;  /* (both, or neither) */
} web_server_options;

/* Listens as O says and serves FLEET, which must outlive the server. O's
 * strings are needed only during the call. NULL with a message. */
web_server *web_server_start(web_fleet *fleet, const web_server_options *o, char *err,
                             size_t errlen);

/* The port it listens on. */
int web_server_port(const web_server *s);

/* Ends every stream and connection and frees S. Shut the fleet down first
 * (web_fleet_shutdown) so that event streams end at once. */
void web_server_stop(web_server *s);

#endif
