/* Request checks of the web server (see web_guard.h). */
#include "web/web_guard.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

bool web_guard_host_ok(const char *listen_host, const char *h)
{
    if (!h) return true;
    size_t n = strcspn(h, ":");
    if (h[0] == '[') n = strcspn(h, "]") + 1; /* [::1]:port */
    if (n == 9 && strncasecmp(h, "localhost", 9) == 0) return true;
    if (h[0] == '[')
        return n == strlen(listen_host) + 2 && strncasecmp(h + 1, listen_host, n - 2) == 0;
    return n == strlen(listen_host) && strncmp(h, listen_host, n) == 0;
}

/* True when CTYPE's media type (before any ";parameters") is
 * application/json: "application/json-seq" or "text/json" are not. */
static bool is_json(const char *ctype)
{
    if (!ctype) return false;
    while (*ctype == ' ' || *ctype == '\t')
        ctype++;
    static const char json[] = "application/json";
    if (strncasecmp(ctype, json, sizeof json - 1) != 0) return false;
    const char *p = ctype + sizeof json - 1;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '\0' || *p == ';';
}

/* True when URL is ORIGIN ("scheme://host[:port]") itself or starts with
 * ORIGIN then "/" (a Referer): "http://127.0.0.1:80801" is not. */
static bool same_origin(const char *url, const char *origin, bool path_ok)
{
    size_t n = strlen(origin);
    if (strncasecmp(url, origin, n) != 0) return false;
    return url[n] == '\0' || (path_ok && (url[n] == '/' || url[n] == '?'));
}

const char *web_guard_csrf(const char *ctype, const char *origin, const char *referer,
                           const char *host_header, bool tls, unsigned *status)
{
    *status = 415;
    if (!is_json(ctype)) return "send the request as application/json";
    *status = 403;
    if (!origin && !referer) return NULL; /* not from a browser's page */
    char self[300];
    if (!host_header || snprintf(self, sizeof self, "%s://%s", tls ? "https" : "http",
                                 host_header) >= (int)sizeof self)
        return "a request from another site";
    if (origin ? same_origin(origin, self, false) : same_origin(referer, self, true)) return NULL;
    return "a request from another site";
}

bool web_guard_token_eq(const char *given, const char *token)
{
    if (!given) return false;
    size_t gn = strlen(given), tn = strlen(token);
    /* Every byte of TOKEN is looked at whatever GIVEN holds, and no
     * early exit: the time tells nothing of how much of it matched. */
    volatile unsigned char diff = gn != tn;
    for (size_t i = 0; i < tn; i++)
        diff |= (unsigned char)token[i] ^ (unsigned char)(i < gn ? given[i] : 0);
    return diff == 0;
}

const char *web_guard_bearer(const char *a)
{
    if (!a || strncasecmp(a, "Bearer ", 7) != 0) return NULL;
    a += 7;
    while (*a == ' ')
        a++;
    return a;
}
