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
 * Nothing else is served. A Host header other than "localhost" or the
 * listening address gets 403 (DNS rebinding). Request bodies above
 * WEB_MAX_BODY get 413; a
 * mission must be posted as application/json (a page on another site cannot
 * send that without the browser asking first). One thread per connection:
 * streams block in their own thread and end when the client goes away.
 */
#ifndef ALOFT_WEB_SERVER_H
#define ALOFT_WEB_SERVER_H

#include "web/web_fleet.h"

#include <stddef.h>

#define WEB_MAX_BODY (16u * 1024u)
#define WEB_MAX_TASK 4000
#define WEB_FRAME_MS 200 /* 5 camera frames a second */

typedef struct web_server web_server;

/* Listens on HOST (an IPv4 address) and PORT (0: any free port) and serves
 * FLEET, which must outlive the server. NULL with a message. */
web_server *web_server_start(web_fleet *fleet, const char *host, int port, char *err,
                             size_t errlen);

/* The port it listens on. */
int web_server_port(const web_server *s);

/* Ends every stream and connection and frees S. Shut the fleet down first
 * (web_fleet_shutdown) so that event streams end at once. */
void web_server_stop(web_server *s);

#endif
