/*
 * Plan verification in a worker process (SPEC §6, §14): the messages
 * between the host and the worker that flies the sampled worlds.
 *
 *   FRAME_VERIFY (host -> worker): the verification options (seed, worlds,
 *     limits, loop bound, start pose), the plan, the scene and the text of
 *     every user skill: a confined worker cannot open a file, so everything
 *     it needs travels here. The worker flies worlds FIRST, FIRST + STEP, ...
 *     below WORLDS, in that order.
 *   FRAME_VWORLD (worker -> host): one world's verdict, the typed form of
 *     verify_world's entry (world, kind, reason, excursion, changes, branch,
 *     calls); a passing world carries its index and kind only.
 *   FRAME_VEND (worker -> host): the worker's share is done, was cancelled
 *     (FRAME_CANCEL with the request's id) or could not run (a message).
 *   FRAME_VBATCH (worker -> host): VWORLD and VEND frames sent together
 *     (each as a text holding its header and payload), at most
 *     VERIFY_WIRE_BATCH_BYTES or VERIFY_WIRE_BATCH_MS old, so that the host
 *     does not wake up for every world.
 *
 * The host reads FRAME_VWORLD and FRAME_VEND as untrusted input:
 * verify_wire_get_world refuses a world outside the share or out of order,
 * a kind that is not one, a passing world with details, lists longer than
 * verify_world ever writes, a string with a NUL byte and bytes left over.
 */
#ifndef ALOFT_VERIFY_VERIFY_WIRE_H
#define ALOFT_VERIFY_VERIFY_WIRE_H

#include "verify/verify.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VERIFY_WIRE_BATCH_BYTES (32u * 1024u)
#define VERIFY_WIRE_BATCH_MS 5.0

/* A user skill's file, as the loader read it. */
typedef struct verify_wire_skill {
    const char *path, *source;
    size_t path_len, source_len;
} verify_wire_skill;

/* A decoded FRAME_VERIFY: the options, and the worker's share. Its strings
 * point into the frame; SCENE and SKILLS are the decoder's (free with
 * verify_wire_request_free). */
typedef struct verify_wire_request {
    verify_opts opts; /* reg and the sandbox hook are the worker's to set */
    drone_pose from;
    uint32_t first, step;
    scene *scene;
    verify_wire_skill *skills;
    uint32_t nskills;
} verify_wire_request;

/* How a worker's share ended (FRAME_VEND). */
typedef enum verify_wire_end {
    VERIFY_WIRE_DONE = 0,
    VERIFY_WIRE_CANCELLED,
    VERIFY_WIRE_FAILED, /* the worker could not fly a world: a message */
} verify_wire_end;

/* Builds FRAME_VERIFY for request ID into F: the options of O (its registry's
 * user skills by their text), the share FIRST, STEP. 0, or -1 with a message
 * (the whole request does not fit in one frame). */
int verify_wire_put_request(frame *f, uint32_t id, const verify_opts *o, uint32_t first,
                            uint32_t step, char *err, size_t errlen);

/* Decodes FRAME_VERIFY. 0, or -1 with a message. */
int verify_wire_get_request(frame *f, verify_wire_request *r, char *err, size_t errlen);
void verify_wire_request_free(verify_wire_request *r);

/* Builds FRAME_VWORLD for request ID from verify_world's entry E and KIND. */
void verify_wire_put_world(frame *f, uint32_t id, const cJSON *e, verify_kind kind);

/* Decodes FRAME_VWORLD, which must be world EXPECTED of at most WORLDS:
 * its verdict into *V and, for a world that did not pass, its entry as
 * verify_world makes it into *ENTRY (else NULL). 0, or -1 with what was
 * wrong. */
int verify_wire_get_world(frame *f, int expected, int worlds, verify_verdict *v, cJSON **entry,
                          char *err, size_t errlen);

/* The next frame inside FRAME_VBATCH B into *INNER (which points into B:
 * not to be freed). 1 with a frame, 0 at B's end, -1 when what is there is
 * not a frame of this request (its header, length or id). */
int verify_wire_next_in_batch(frame *b, frame *inner);

/* FRAME_VEND: how the share ended, and a message for VERIFY_WIRE_FAILED. */
void verify_wire_put_end(frame *f, uint32_t id, verify_wire_end end, const char *msg);
int verify_wire_get_end(frame *f, verify_wire_end *end, char *msg, size_t msglen, char *err,
                        size_t errlen);

#endif
