/*
 * Reading a skill file in a worker (skill_meta.h), the parts host/worker/
 * shares: the fields in a frame, and the worker's handler.
 *
 * FRAME_SKILL_READ (host -> worker): instructions, memory and time budgets
 * (u64 each), the file's path (str) and the file's text (text). The worker
 * runs the chunk on a thread of its own in a fresh sandbox with those
 * budgets and answers FRAME_SKILL_META: a status (u8, sandbox_status), a
 * message (str, "" when OK) and, when OK, the fields (skill_meta_put). The
 * frames' mission id is the read's own, from a range no mission takes.
 */
#ifndef ALOFT_WORKER_SKILL_READ_H
#define ALOFT_WORKER_SKILL_READ_H

#include "worker/frame.h"
#include "worker/skill_meta.h"

#include <stdbool.h>

/* Read ids have this bit set; missions count up from 1 without it. */
#define SKILL_READ_ID_BIT 0x80000000u

void skill_meta_put(frame *f, const skill_meta *m);
/* Reads what skill_meta_put wrote, checking every type, size and count;
 * false (with *M partly filled: free it) when the frame is malformed. */
bool skill_meta_get(frame *f, skill_meta *m);

/* The worker's side: answers a FRAME_SKILL_READ (taken, freed when done)
 * from a thread of its own. */
void worker_skill_read(frame *f);

/* Sends a frame to the host from any thread of the worker (worker.c). */
void worker_send(frame *f);

#endif
