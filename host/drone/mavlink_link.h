/*
 * MAVLink links: where frames come from and go to, by URL (SPEC §9)
 *   udpin:HOST:PORT     we listen on HOST:PORT and answer each vehicle at
 *                       the address it last sent from (default
 *                       udpin:0.0.0.0:14540, where PX4 SITL sends)
 *   udpout:HOST:PORT    we send to HOST:PORT from a port of our own
 *   tcp:HOST:PORT       we connect to HOST:PORT
 *   serial:DEVICE:BAUD  a serial port, raw 8N1, at BAUD
 *
 * Several vehicles can share one link (one UDP port in particular): a link
 * is opened once per process and shared; each driver subscribes to one
 * system id (or to the first vehicle no one else flies) and is handed only
 * that vehicle's frames; what it sends goes to that vehicle's address. One
 * reader thread per link reads, parses and dispatches.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef ALOFT_DRONE_MAVLINK_LINK_H
#define ALOFT_DRONE_MAVLINK_LINK_H

#include "drone/mavlink_codec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAVLINK_DEFAULT_URL "udpin:0.0.0.0:14540"

typedef enum mavlink_url_kind {
    MAVLINK_UDPIN,
    MAVLINK_UDPOUT,
    MAVLINK_TCP,
    MAVLINK_SERIAL,
} mavlink_url_kind;

typedef struct mavlink_url {
    mavlink_url_kind kind;
    char host[256]; /* host name or address; the device for serial */
    int port;       /* the port; the baud rate for serial */
} mavlink_url;

/* Parses TEXT. Returns 0, or -1 with a message naming the accepted forms. */
int mavlink_url_parse(const char *text, mavlink_url *out, char *err, size_t errlen);

/* Writes the URL back as text ("udpin:0.0.0.0:14540"). */
const char *mavlink_url_format(const mavlink_url *u, char *buf, size_t len);

typedef struct mavlink_link mavlink_link;

/* Called on the link's reader thread, with the link's lock held, with each
 * frame of the subscribed vehicle: it must not block for long and must not
 * call any mavlink_sub_* function but mavlink_sub_sysid (which takes no
 * lock), nor wait for a thread that does. */
typedef void (*mavlink_on_frame)(void *ud, const mav_frame *f);

typedef struct mavlink_sub mavlink_sub;

/*
 * Opens URL (or finds it open: then OUR_SYSID and OUR_COMPID must match the
 * ones it was opened with) and subscribes ON_FRAME to vehicle SYSID (1-255),
 * or with SYSID 0 to the first vehicle heard whose system id no other
 * subscription holds (a vehicle is what sends a HEARTBEAT of an autopilot).
 * Returns the subscription, or NULL with a message (a bad port, a taken
 * system id, a device that will not open).
 */
mavlink_sub *mavlink_subscribe(const mavlink_url *url, int sysid, int our_sysid, int our_compid,
                               mavlink_on_frame on_frame, void *ud, char *err, size_t errlen);

/* Ends the subscription: ON_FRAME is not called any more once this returns.
 * The last one closes the link. */
void mavlink_unsubscribe(mavlink_sub *s);

/* The vehicle's system id (0 while none was heard). */
int mavlink_sub_sysid(const mavlink_sub *s);

/*
 * Sends message MSGID (payload LEN bytes) to the subscribed vehicle, from our
 * system and component id. On udpin before the vehicle was heard there is no
 * address yet: -1 with a message. Returns 0, or -1 with a message.
 */
int mavlink_sub_send(mavlink_sub *s, uint32_t msgid, const uint8_t *payload, size_t len, char *err,
                     size_t errlen);

/* The parser's counters of the link (all vehicles). */
mav_parser_stats mavlink_sub_stats(const mavlink_sub *s);

#endif
