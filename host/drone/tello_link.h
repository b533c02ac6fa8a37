/*
 * The Tello's command channel: one UDP socket that sends SDK text commands
 * to the drone and reads its answers, which come back from the drone's
 * command port to ours. No retries, no policy: tello.c decides those.
 *
 * Not thread-safe by itself: the driver holds its command lock around each
 * exchange (drain, send, await).
 */
#ifndef ALOFT_DRONE_TELLO_LINK_H
#define ALOFT_DRONE_TELLO_LINK_H

#include "clock.h"
#include "drone/drone.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct tello_link {
    int fd;                       /* the command socket, -1 when closed */
    struct sockaddr_storage addr; /* the drone's command address */
    socklen_t addrlen;
    char where[300]; /* "HOST:PORT", for messages */
    bool trace;      /* ALOFT_TELLO_TRACE set: every exchange on stderr */
} tello_link;

/* What an exchange expects back. A control command is answered "ok" or an
 * error text; a query ("battery?") with a number such as "87" or "8dm". */
typedef enum tello_reply_kind { TELLO_REPLY_CONTROL, TELLO_REPLY_QUERY } tello_reply_kind;

/* Results of tello_link_await. */
enum { TELLO_LINK_REPLY = 1, TELLO_LINK_TIMEOUT = 0, TELLO_LINK_CANCEL = -1 };

/* Resolves HOST:PORT and opens the command socket on a free local port.
 * Returns 0, or -1 with a message. */
int tello_link_open(tello_link *l, const char *host, int port, char *err, size_t errlen);

/* Closes the command socket (idempotent). */
void tello_link_close(tello_link *l);

/* Opens a UDP socket of the drone's address family bound to local PORT, for
 * what the drone sends on its own (WHAT names it in the message: "state").
 * Returns the descriptor, or -1 with a message (e.g. the port is taken). */
int tello_link_bind(const tello_link *l, int port, const char *what, char *err, size_t errlen);

/* Did SRC come from the drone (its address; and its command port when
 * CHECK_PORT)? Datagrams from anyone else are ignored. */
bool tello_link_from_drone(const tello_link *l, const struct sockaddr_storage *src,
                           bool check_port);

/* True for a query's answer: it starts with a digit or a sign. */
bool tello_reply_is_query(const char *reply);

/* Sends CMD as one datagram. Returns 0, or -1 with a message. */
int tello_link_send(tello_link *l, const char *cmd, char *err, size_t errlen);

/* Drops every datagram waiting on the socket: answers to commands the
 * driver has given up on (late replies). */
void tello_link_drain(tello_link *l);

/*
 * Waits until DEADLINE_MS (clock_now_ms clock) for an answer of KIND, trimmed
 * into REPLY; answers of the other kind are late ones and are dropped. If
 * ABORT_FROM is not NULL its abort callback is polled every 50 ms.
 * Returns TELLO_LINK_REPLY, TELLO_LINK_TIMEOUT or TELLO_LINK_CANCEL.
 */
int tello_link_await(tello_link *l, tello_reply_kind kind, double deadline_ms,
                     const drone *abort_from, char *reply, size_t replylen);

#endif
