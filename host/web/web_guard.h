/*
 * Who may ask what of the web server (SPEC §13), decided from a request's
 * headers alone:
 *
 * - Host: on loopback without a token, only "localhost" or the listening
 *   address (a page whose name was made to resolve to 127.0.0.1, DNS
 *   rebinding, sends its own name and is refused).
 * - State-changing requests (POST: missions, stop, any added later) need
 *   Content-Type application/json, which a page on another site cannot send
 *   without the browser asking first, and an Origin (or, without one, a
 *   Referer) of this very server; "null" is foreign.
 * - A token, when set (required beyond loopback): "Authorization: Bearer T",
 *   or the cookie that loading the page with "?token=T" once sets.
 *   Compared in constant time.
 */
#ifndef ALOFT_WEB_GUARD_H
#define ALOFT_WEB_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#define WEB_TOKEN_COOKIE "aloft_token"

/* True when HOST_HEADER (may be NULL: HTTP/1.0, not a browser) names
 * "localhost" or LISTEN_HOST (IPv6 in brackets), any port. */
bool web_guard_host_ok(const char *listen_host, const char *host_header);

/* NULL when a state-changing request with these headers (each may be NULL)
 * may go on, else why not. HOST_HEADER is the request's own Host; TLS says
 * whether the server speaks https. *STATUS gets 415 or 403. */
const char *web_guard_csrf(const char *ctype, const char *origin, const char *referer,
                           const char *host_header, bool tls, unsigned *status);

/* True when GIVEN (may be NULL) equals TOKEN, in time that depends only on
 * the lengths. */
bool web_guard_token_eq(const char *given, const char *token);

/* The token of an "Authorization: Bearer T" header value, or NULL. */
const char *web_guard_bearer(const char *authorization);

#endif
