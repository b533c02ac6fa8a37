/*
 * The Tello's camera, received by aloft itself: raw H.264 (Annex-B) in UDP
 * datagrams to a local port, handed to FFmpeg (through OpenCV) as a pipe.
 *
 * Why not FFmpeg's own udp:// reader: it binds the port only when the
 * capture opens, so what the drone sends before (its first keyframe, right
 * after `streamon`) is lost; a stream that started mid-GOP then reaches the
 * decoder without its parameter sets, and FFmpeg's probe either waits
 * seconds (the default) or opens a stream it cannot decode (a short one);
 * and a read blocked in FFmpeg cannot be interrupted when the mission ends.
 * The feed binds the port at once (before `streamon`), passes nothing on
 * until a sequence parameter set (NAL type 7) starts a datagram's run, so
 * the decoder always starts at SPS, PPS and a keyframe and a short probe
 * suffices (vision_capture_open's "pipe:" sources), counts what arrives,
 * and ends the reader's stream (end of file) when closed.
 *
 * A receiving thread reads the socket; the pipe's write end is
 * non-blocking, so a reader that falls behind loses datagrams (counted as
 * dropped), never stalls the socket: the feed then waits for the next
 * parameter sets before passing data on again.
 */
#ifndef ALOFT_VISION_H264_FEED_H
#define ALOFT_VISION_H264_FEED_H

#include <stdbool.h>
#include <stddef.h>

typedef struct h264_feed h264_feed;

/* Binds UDP PORT on all addresses and starts receiving. NULL with a
 * message (the port is taken, no thread). */
h264_feed *h264_feed_open(int port, char *err, size_t errlen);

/* A pipe for a decoder: returns its read end (the caller closes it), or -1
 * with a message. The first call gets the pipe made with the feed, holding
 * what arrived since (from the first parameter sets on); a later one a
 * fresh pipe, fed from the next parameter sets on, and the earlier pipe's
 * write end is closed (its reader sees the end of the stream). */
int h264_feed_attach(h264_feed *f, char *err, size_t errlen);

typedef struct h264_feed_stats {
    long datagrams;      /* received */
    long bytes;          /* received */
    long passed;         /* datagrams written to the decoder's pipe */
    long skipped;        /* not passed on while waiting for parameter sets */
    long dropped;        /* datagrams lost because the decoder fell behind */
    double first_ms;     /* clock_now_ms of the first datagram, -1 if none */
    double first_sps_ms; /* of the first parameter set, -1 if none */
    double last_ms;      /* of the latest datagram, -1 if none */
} h264_feed_stats;

void h264_feed_stats_get(h264_feed *f, h264_feed_stats *out);

/* Ends the decoder's stream for good: closes the pipe's write end (its
 * reader sees the end of the stream) and makes later attaches fail, while
 * the socket is still read. For a reader on another thread that must
 * stop before the feed is closed. */
void h264_feed_end(h264_feed *f);

/* Stops receiving, closes the socket and the pipe's write end. NULL is
 * fine. */
void h264_feed_close(h264_feed *f);

#endif
