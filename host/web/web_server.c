/* The web UI's HTTP server (see web_server.h). */
#include "web/web_server.h"

#include "embedded.h"
#include "errmsg.h"
#include "jsonout.h"
#include "utf8.h"
#include "web/web_conns.h"
#include "web/web_guard.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SSE_PING_MS 1000 /* a comment this often: finds a closed client */
/* A connection that sends nothing (or whose client reads nothing) this long
 * is closed: a stream sends at least a ping a second. */
#define IDLE_TIMEOUT_S 10

struct web_server {
    struct MHD_Daemon *mhd;
    char host[64]; /* the address it listens on */
    char *token;   /* NULL: none asked */
    bool tls;
    web_fleet *fleet;
    web_conns *conns;
    int port;
    atomic_bool stopping;
};

/* One request: its body as it arrives. */
typedef struct request {
    char body[WEB_MAX_BODY + 1];
    size_t len;
    bool too_big;
    bool answered; /* refused from the headers alone: the body is ignored */
} request;

static const char *const security_headers[][2] = {
    {"Cache-Control", "no-store"},
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
};

static enum MHD_Result send_response(struct MHD_Connection *c, unsigned status,
                                     struct MHD_Response *r, const char *type)
{
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    for (size_t i = 0; i < sizeof security_headers / sizeof *security_headers; i++)
        MHD_add_response_header(r, security_headers[i][0], security_headers[i][1]);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Sends DOC (taken) as JSON. */
static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, cJSON *doc)
{
    char *text = doc ? jsonout_print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!r) free(text);
    return send_response(c, status, r, "application/json");
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    return send_json(c, status, o);
}

static enum MHD_Result send_file(struct MHD_Connection *c, const char *path, const char *type)
{
    const embedded_file *f = embedded_find(path);
    if (!f) return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    struct MHD_Response *r =
        MHD_create_response_from_buffer(f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
    /* The page runs only its own script and style, and talks only to us. */
    if (r)
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'none'; script-src 'self'; style-src 'self'; "
                                "img-src 'self'; connect-src 'self'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'");
    return send_response(c, MHD_HTTP_OK, r, type);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- streams ---------------------------------------------------------- */

/* A stream being sent: PENDING[OFF..LEN) goes out before more is made. */
typedef struct stream {
    web_server *srv;
    int id;
    char *pending;
    size_t len, off;
    web_events_cursor cur; /* SSE: where it is in the drone's event log */
    double next_ms;        /* MJPEG: when the next frame is due */
} stream;

static void stream_free(void *cls)
{
    stream *s = cls;
    free(s->pending);
    free(s);
}

static ssize_t stream_copy(stream *s, char *buf, size_t max)
{
    size_t n = s->len - s->off;
    if (n > max) n = max;
    memcpy(buf, s->pending + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

static void stream_set(stream *s, char *text, size_t len)
{
    free(s->pending);
    s->pending = text;
    s->len = len;
    s->off = 0;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *s = cls;
    if (s->off < s->len) return stream_copy(s, buf, max);
    web_events *h = web_fleet_events(s->srv->fleet, s->id);
    if (atomic_load(&s->srv->stopping) || web_events_closed(h))
        return MHD_CONTENT_READER_END_OF_STREAM;
    long n = web_events_read(h, &s->cur, buf, max, SSE_PING_MS);
    if (n > 0) return (ssize_t)n;
    if (n < 0 || atomic_load(&s->srv->stopping) || web_events_closed(h))
        return MHD_CONTENT_READER_END_OF_STREAM;
    char *ping = strdup(": ping\n\n");
    if (!ping) return MHD_CONTENT_READER_END_WITH_ERROR;
    stream_set(s, ping, strlen(ping));
    return stream_copy(s, buf, max);
}

static ssize_t mjpeg_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *s = cls;
    if (s->off < s->len) return stream_copy(s, buf, max);
    /* Wait for the frame's time in short naps, so that a stopping server
     * does not wait for us. */
    for (;;) {
        if (atomic_load(&s->srv->stopping)) return MHD_CONTENT_READER_END_OF_STREAM;
        double left = s->next_ms - now_ms();
        if (left <= 0) break;
        if (left > 50) left = 50;
        struct timespec ts = {0, (long)(left * 1e6)};
        nanosleep(&ts, NULL);
    }
    s->next_ms += WEB_FRAME_MS;
    if (s->next_ms < now_ms()) s->next_ms = now_ms() + WEB_FRAME_MS; /* fell behind */
    char err[256];
    size_t jlen = 0;
    unsigned char *jpeg = web_fleet_frame(s->srv->fleet, s->id, &jlen, err, sizeof err);
    if (!jpeg) {
        fprintf(stderr, "aloft serve: camera of drone %d: %s\n", s->id, err);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    char head[128];
    int hlen = snprintf(head, sizeof head,
                        "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n\r\n", jlen);
    char *part = malloc((size_t)hlen + jlen + 2);
    if (!part) {
        free(jpeg);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    memcpy(part, head, (size_t)hlen);
    memcpy(part + hlen, jpeg, jlen);
    memcpy(part + hlen + jlen, "\r\n", 2);
    free(jpeg);
    stream_set(s, part, (size_t)hlen + jlen + 2);
    return stream_copy(s, buf, max);
}

/* Our entry for connection C (web_conns.h), or NULL. */
static web_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static enum MHD_Result send_stream(web_server *srv, struct MHD_Connection *c, int id, bool sse)
{
    if (!web_conns_stream(srv->conns, conn_of(c)))
        return send_error(c, MHD_HTTP_TOO_MANY_REQUESTS,
                          "too many streams open: close some pages of this server");
    stream *s = calloc(1, sizeof *s);
    if (!s) return MHD_NO;
    s->srv = srv;
    s->id = id;
    if (sse) {
        /* A browser that reconnects says what it saw; otherwise the
         * current mission is replayed from its start. */
        const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
        char *end;
        long v = last ? strtol(last, &end, 10) : -1;
        s->cur.last = last && *last && !*end && v >= 0
                          ? v
                          : web_events_first(web_fleet_events(srv->fleet, id));
        s->pending = strdup("retry: 1000\n\n");
        s->len = s->pending ? strlen(s->pending) : 0;
    } else {
        s->next_ms = now_ms();
    }
    struct MHD_Response *r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 16 * 1024, sse ? sse_read : mjpeg_read, s, stream_free);
    if (!r) {
        stream_free(s);
        return MHD_NO;
    }
    return send_response(c, MHD_HTTP_OK, r,
                         sse ? "text/event-stream" : "multipart/x-mixed-replace; boundary=frame");
}

/* ---- routes -------------------------------------------------------------- */

/* "/api/drones/ID/ACTION": ID into *ID and ACTION returned, or NULL when
 * PATH does not have that shape. *ID is -1 when ID is not a drone number. */
static const char *drone_route(const char *path, int *id)
{
    static const char prefix[] = "/api/drones/";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0) return NULL;
    const char *p = path + sizeof prefix - 1;
    const char *slash = strchr(p, '/');
    if (!slash || slash == p) return NULL;
    *id = 0;
    for (const char *q = p; q < slash; q++) {
        if (!isdigit((unsigned char)*q) || slash - p > 4) {
            *id = -1;
            break;
        }
        *id = *id * 10 + (*q - '0');
    }
    return slash + 1;
}

/* True when the N bytes of a JSON body are well-formed UTF-8 (no overlong
 * forms, no surrogates) and hold no NUL, raw or escaped as \u0000: cJSON
 * would cut a string there, so that what is recorded is not what was sent.
 * Escaped surrogates that pair with nothing fail cJSON's own parse. */
static bool text_ok(const char *body, size_t n)
{
    if (!utf8_valid(body, n) || memchr(body, '\0', n)) return false;
    for (size_t i = 0; i + 6 <= n; i++) {
        if (body[i] != '\\') continue;
        if (body[i + 1] == 'u' && strncmp(body + i + 2, "0000", 4) == 0) return false;
        i++; /* an escaped character: "\\u0000" is text */
    }
    return true;
}

static enum MHD_Result post_mission(web_server *srv, struct MHD_Connection *c, int id, request *rq)
{
    if (!text_ok(rq->body, rq->len))
        return send_error(c, MHD_HTTP_BAD_REQUEST,
                          "the body is not valid UTF-8 text (or holds a NUL character)");
    cJSON *doc = cJSON_ParseWithLength(rq->body, rq->len);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "task");
    const char *why = NULL;
    if (!cJSON_IsObject(doc))
        why = "the body is not a JSON object";
    else if (!cJSON_IsString(t))
        why = "give {\"task\": \"...\"}";
    else if (strlen(t->valuestring) > WEB_MAX_TASK)
        why = "the task is too long";
    else {
        const char *p = t->valuestring;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p) why = "the task is empty";
    }
    if (why) {
        cJSON_Delete(doc);
        return send_error(c, MHD_HTTP_BAD_REQUEST, why);
    }
    char err[256];
    int run = 0;
    int rc = web_fleet_start(srv->fleet, id, t->valuestring, &run, err, sizeof err);
    cJSON_Delete(doc);
    if (rc == WEB_BUSY)
        return send_error(c, MHD_HTTP_CONFLICT, "the drone is flying a mission: stop it first");
    if (rc != WEB_STARTED) return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, err);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "drone", id);
    cJSON_AddNumberToObject(o, "run", run);
    return send_json(c, MHD_HTTP_ACCEPTED, o);
}

static enum MHD_Result method_not_allowed(struct MHD_Connection *c, const char *allow)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", "method not allowed");
    char *text = jsonout_print(o);
    cJSON_Delete(o);
    if (!text) return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Allow", allow);
    return send_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r, "application/json");
}

static enum MHD_Result route(web_server *srv, struct MHD_Connection *c, const char *url,
                             const char *method, request *rq)
{
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    static const struct {
        const char *path, *file, *type;
    } files[] = {
        {"/", "web/index.html", "text/html; charset=utf-8"},
        {"/app.js", "web/app.js", "text/javascript; charset=utf-8"},
        {"/style.css", "web/style.css", "text/css; charset=utf-8"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (strcmp(url, files[i].path) == 0)
            return get ? send_file(c, files[i].file, files[i].type) : method_not_allowed(c, "GET");
    if (strcmp(url, "/favicon.ico") == 0 && get) /* no icon, and no 404 in the console */
        return send_response(c, MHD_HTTP_NO_CONTENT,
                             MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT),
                             "image/x-icon");
    if (strcmp(url, "/api/drones") == 0)
        return get ? send_json(c, MHD_HTTP_OK, web_fleet_json(srv->fleet))
                   : method_not_allowed(c, "GET");
    int id;
    const char *action = drone_route(url, &id);
    if (!action) return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    bool known = strcmp(action, "missions") == 0 || strcmp(action, "stop") == 0 ||
                 strcmp(action, "events") == 0 || strcmp(action, "camera.mjpg") == 0;
    if (!known) return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    if (id < 0 || id >= web_fleet_count(srv->fleet))
        return send_error(c, MHD_HTTP_NOT_FOUND, "no such drone");
    if (strcmp(action, "missions") == 0)
        return post ? post_mission(srv, c, id, rq) : method_not_allowed(c, "POST");
    if (strcmp(action, "stop") == 0) {
        if (!post) return method_not_allowed(c, "POST");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "drone", id);
        cJSON_AddBoolToObject(o, "stopped", web_fleet_stop(srv->fleet, id));
        return send_json(c, MHD_HTTP_OK, o);
    }
    if (!get) return method_not_allowed(c, "GET");
    return send_stream(srv, c, id, strcmp(action, "events") == 0);
}

/* Sets the token's cookie for the page and sends the browser on to "/", so
 * that the token leaves the address bar (and the history). */
static enum MHD_Result token_redirect(web_server *srv, struct MHD_Connection *c)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    char cookie[600];
    snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s", WEB_TOKEN_COOKIE,
             srv->token, srv->tls ? "; Secure" : "");
    MHD_add_response_header(r, "Set-Cookie", cookie);
    MHD_add_response_header(r, "Location", "/");
    return send_response(c, MHD_HTTP_SEE_OTHER, r, "text/plain");
}

/* What the headers alone decide (web_guard.h): the Host, the token, a
 * state-changing request's origin and content type, the body's size. Sets
 * *DONE and returns the answer when the request is refused (or redirected). */
static enum MHD_Result check_headers(web_server *srv, struct MHD_Connection *c, const char *url,
                                     const char *method, bool *done)
{
    *done = true;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    /* With a token, a rebinding page has none (the cookie is bound to the
     * name it was set for), and the server may be reached by any name. */
    if (!srv->token && !web_guard_host_ok(srv->host, host))
        return send_error(c, MHD_HTTP_FORBIDDEN,
                          "unknown Host: use the address aloft serve printed");
    if (srv->token) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, WEB_TOKEN_COOKIE);
        const char *query = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
        bool page = strcmp(url, "/") == 0 && strcmp(method, "GET") == 0;
        if (page && web_guard_token_eq(query, srv->token)) return token_redirect(srv, c);
        if (!web_guard_token_eq(web_guard_bearer(auth), srv->token) &&
            !web_guard_token_eq(cookie, srv->token))
            return send_error(c, MHD_HTTP_UNAUTHORIZED,
                              "give the server's token: open /?token=TOKEN once, or send "
                              "Authorization: Bearer TOKEN");
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        unsigned status;
        const char *why = web_guard_csrf(
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Referer"), host, srv->tls, &status);
        if (why) return send_error(c, status, why);
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > WEB_MAX_BODY)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "the request body is too large");
    *done = false;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **ctx)
{
    (void)version;
    web_server *srv = cls;
    request *rq = *ctx;
    if (!rq) {
        /* Headers only so far: refuse what they decide before reading
         * any of the body. */
        rq = calloc(1, sizeof *rq);
        if (!rq) return MHD_NO;
        *ctx = rq;
        return check_headers(srv, c, url, method, &rq->answered);
    }
    if (rq->answered) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->too_big && rq->len + *upload_size <= WEB_MAX_BODY) {
            memcpy(rq->body + rq->len, upload, *upload_size);
            rq->len += *upload_size;
        } else {
            rq->too_big = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->too_big)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "the request body is too large");
    rq->body[rq->len] = '\0';
    return route(srv, c, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    web_server *srv = cls;
    web_conns_request_done(srv->conns, conn_of(c));
    free(*ctx);
    *ctx = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    web_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        web_conns_closed(srv->conns, *socket_ctx);
        *socket_ctx = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *addr =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (fd && addr) *socket_ctx = web_conns_opened(srv->conns, fd->connect_fd, addr->client_addr);
}

/* HOST (an IPv4 or IPv6 address) and PORT as a socket address in ADDR;
 * false when HOST is not an address. */
static bool listen_addr(const char *host, int port, struct sockaddr_storage *addr)
{
    memset(addr, 0, sizeof *addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        return true;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        return true;
    }
    return false;
}

web_server *web_server_start(web_fleet *fleet, const web_server_options *o, char *err,
                             size_t errlen)
{
    struct sockaddr_storage addr;
    if (!listen_addr(o->host, o->port, &addr))
        return errmsg_set(err, errlen, "--host %s: not an IPv4 or IPv6 address", o->host), NULL;
    if (o->port < 0 || o->port > 65535)
        return errmsg_set(err, errlen, "--port %d: not a port", o->port), NULL;
    bool tls = o->tls_cert && o->tls_key;
    if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return errmsg_set(err, errlen, "this libmicrohttpd has no TLS (GnuTLS)"), NULL;
    web_server *s = calloc(1, sizeof *s);
    if (!s) return errmsg_set(err, errlen, "out of memory"), NULL;
    s->fleet = fleet;
    s->tls = tls;
    snprintf(s->host, sizeof s->host, "%s", o->host);
    atomic_init(&s->stopping, false);
    s->conns = web_conns_new();
    s->token = o->token ? strdup(o->token) : NULL;
    if (!s->conns || (o->token && !s->token)) {
        web_server_stop(s);
        return errmsg_set(err, errlen, "out of memory"), NULL;
    }
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    if (tls) flags |= MHD_USE_TLS;
    /* The connection limit is above what idle connections and streams may
     * take (web_conns.h): the rest is there for Stop. */
    struct MHD_OptionItem tls_opts[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    s->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONNS_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_ARRAY, tls ? tls_opts : tls_opts + 2, MHD_OPTION_END);
    if (!s->mhd) {
        errmsg_set(err, errlen,
                   tls ? "cannot listen on %s port %d (in use, not an address of this host, or "
                         "the certificate and key do not load)"
                       : "cannot listen on %s port %d (in use, or not an address of this host)",
                   o->host, o->port);
        web_server_stop(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    return s;
}

int web_server_port(const web_server *s)
{
    return s->port;
}

void web_server_stop(web_server *s)
{
    if (!s) return;
    atomic_store(&s->stopping, true);
    if (s->mhd) MHD_stop_daemon(s->mhd);
    web_conns_free(s->conns);
    free(s->token);
    free(s);
}
