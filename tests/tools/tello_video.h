/*
 * The Tello emulator's camera (tello_emu --video-port P): after `streamon`,
 * raw H.264 (Annex-B) to 127.0.0.1:P as a Tello sends it to its client's
 * port 11111: each frame's bytes in datagrams of at most 1,460 bytes, 30
 * frames a second, 960x720, looping over a clip.
 *
 * The clip is --video-clip FILE, or made at start: 60 frames of a room
 * (sky, floor) with one pure red block that the project's generated test
 * detectors (tests/vision/gen_models.py: 16-pixel cells at 128 input) see as
 * an apple, exactly filling one cell: frame pixels [480, 600) x [360, 480),
 * centre (0.5625, 0.5833). The frames are encoded with the libavcodec that
 * OpenCV links (vision_video_write).
 *
 * Faults: --video-start-ms N (the first datagram N ms after streamon),
 * --video-dark-ms N (nothing more N ms after the first), --loss-video PCT
 * (each datagram lost with that chance, seeded), --video-garbage (random
 * bytes instead of the clip).
 */
#ifndef ALOFT_TESTS_TELLO_VIDEO_H
#define ALOFT_TESTS_TELLO_VIDEO_H

#include "vision/paint.h"
#include "vision/opencv.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TV_W 960
#define TV_H 720
#define TV_FPS 30
#define TV_DATAGRAM 1460
#define TV_MAX_UNITS 4096

typedef struct tello_video {
    /* options */
    int port; /* 0: no camera */
    const char *clip_path;
    double start_ms, dark_ms, loss;
    bool garbage;
    /* the clip, cut into access units (one frame each) */
    unsigned char *clip;
    size_t len;
    size_t unit[TV_MAX_UNITS + 1]; /* offsets; unit[n] = len */
    int n;
    /* streaming */
    int fd;
    bool on;
    double on_ms, first_ms, next_ms;
    int next_unit;
    long frames, datagrams, lost;
    uint64_t rng;
} tello_video;

/* The start of the Annex-B start code at or after AT, or LEN. */
static size_t tv_start_code(const unsigned char *b, size_t len, size_t at)
{
    for (size_t i = at; i + 3 <= len; i++)
        if (b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1) return i > at && b[i - 1] == 0 ? i - 1 : i;
    return len;
}

/* Cuts the clip into access units: parameter sets and SEI travel with the
 * frame they precede, a frame ends after its slice (NAL types 1 and 5). */
static void tv_cut(tello_video *v)
{
    v->n = 0;
    size_t at = tv_start_code(v->clip, v->len, 0), unit = at;
    while (at < v->len && v->n < TV_MAX_UNITS) {
        size_t hdr = at + (v->clip[at + 2] == 1 ? 3 : 4);
        size_t next = tv_start_code(v->clip, v->len, hdr);
        int type = hdr < v->len ? v->clip[hdr] & 0x1f : 0;
        if (type == 1 || type == 5) {
            v->unit[v->n++] = unit;
            unit = next;
        }
        at = next;
    }
    v->unit[v->n] = unit < v->len ? unit : v->len;
}

/* Paints and encodes the default clip into PATH. */
static int tv_make_clip(const char *path, char *err, size_t errlen)
{
    enum { FRAMES = 60 };
    vision_frame *frames = calloc(FRAMES, sizeof *frames);
    if (!frames) return snprintf(err, errlen, "out of memory"), -1;
    static const unsigned char red[3] = {0, 0, 230};
    int rc = 0;
    for (int k = 0; k < FRAMES && rc == 0; k++) {
        frames[k].w = TV_W, frames[k].h = TV_H, frames[k].stride = TV_W * 3;
        frames[k].bgr = malloc((size_t)TV_W * TV_H * 3);
        if (!frames[k].bgr) {
            rc = -1;
            break;
        }
        paint_image img = {TV_W, TV_H, frames[k].bgr};
        paint_view(&img, NULL, 0, NULL);
        paint_rect_draw(&img, (paint_rect){480, 360, 120, 120}, red, 0);
    }
    if (rc == 0) rc = vision_video_write(path, frames, FRAMES, TV_FPS, err, errlen);
    for (int k = 0; k < FRAMES; k++)
        vision_frame_clear(&frames[k]);
    free(frames);
    return rc;
}

/* Loads (or makes) the clip and opens the socket. Returns 0, or -1 with a
 * message. */
static int tello_video_open(tello_video *v, uint64_t seed, char *err, size_t errlen)
{
    v->rng = seed * 0xD6E8FEB86659FD93ULL + 4;
    v->fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (v->fd < 0) return snprintf(err, errlen, "video socket"), -1;
    char made[] = "/tmp/tello-emu-clip-XXXXXX.h264";
    const char *path = v->clip_path;
    if (!path && !v->garbage) {
        int fd = mkstemps(made, 5);
        if (fd < 0) return snprintf(err, errlen, "cannot make a clip file"), -1;
        close(fd);
        if (tv_make_clip(made, err, errlen) != 0) {
            unlink(made);
            return -1;
        }
        path = made;
    }
    if (path) {
        FILE *f = fopen(path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long size = ftell(f);
            fseek(f, 0, SEEK_SET);
            v->clip = size > 0 ? malloc((size_t)size) : NULL;
            v->len = v->clip ? fread(v->clip, 1, (size_t)size, f) : 0;
            fclose(f);
        }
        if (path == made) unlink(made);
        if (!v->len) return snprintf(err, errlen, "cannot read the clip %s", path), -1;
        tv_cut(v);
        if (v->n == 0) return snprintf(err, errlen, "no H.264 frames in %s", path), -1;
    }
    return 0;
}

static uint64_t tv_next(tello_video *v)
{
    v->rng ^= v->rng >> 12;
    v->rng ^= v->rng << 25;
    v->rng ^= v->rng >> 27;
    return v->rng * 2685821657736338717ULL;
}

static void tello_video_switch(tello_video *v, bool on, double now)
{
    if (on && !v->on) {
        v->on_ms = now;
        v->first_ms = -1;
        v->next_ms = now + v->start_ms;
    }
    v->on = on;
}

/* Sends the frames that are due. */
static void tello_video_tick(tello_video *v, double now)
{
    if (!v->port || !v->on || now < v->next_ms) return;
    if (v->first_ms < 0) v->first_ms = now;
    if (v->dark_ms > 0 && now - v->first_ms >= v->dark_ms) return;
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)v->port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned char junk[TV_DATAGRAM];
    const unsigned char *data;
    size_t len;
    if (v->garbage) {
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)(tv_next(v) >> 56);
        data = junk, len = sizeof junk;
    } else {
        data = v->clip + v->unit[v->next_unit];
        len = v->unit[v->next_unit + 1] - v->unit[v->next_unit];
        v->next_unit = (v->next_unit + 1) % v->n;
    }
    for (size_t off = 0; off < len; off += TV_DATAGRAM) {
        size_t part = len - off < TV_DATAGRAM ? len - off : TV_DATAGRAM;
        v->datagrams++;
        if (v->loss > 0 && (double)((tv_next(v) >> 11) % 1000000) / 10000.0 < v->loss) {
            v->lost++;
            continue;
        }
        sendto(v->fd, data + off, part, 0, (struct sockaddr *)&to, sizeof to);
    }
    v->frames++;
    v->next_ms += 1000.0 / TV_FPS;
    if (v->next_ms < now) v->next_ms = now; /* a stall does not burst */
}

static void tello_video_close(tello_video *v)
{
    free(v->clip);
    if (v->fd > 0) close(v->fd);
}

#endif
