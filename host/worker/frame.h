/*
 * The frames between the host and a worker process (SPEC §6): a fixed
 * header (payload length, type, mission id) and a typed payload, on a
 * socketpair. Both ends are this same binary, so integers travel in the
 * machine's own byte order.
 *
 * The host reads what a worker sends as untrusted input: a payload longer
 * than FRAME_MAX, a type it does not expect, a value that does not parse or
 * fields left over make the frame malformed, and the worker is cut off.
 */
#ifndef ALOFT_WORKER_FRAME_H
#define ALOFT_WORKER_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest payload either end accepts: a statement's Lua, a skill's
 * source or one line of output fits; a worker cannot make the host buffer
 * more than this for one frame. */
#define FRAME_MAX (1024u * 1024u)
/* The largest string value inside a frame (a skill argument, a message). */
#define FRAME_MAX_STR (64u * 1024u)

typedef enum frame_type {
    /* host -> worker */
    FRAME_OPEN = 1, /* limits and skills of a new mission: answered by OPENED */
    FRAME_BEGIN,    /* a new plan: a fresh variable table (answered by DONE) */
    FRAME_EVENT,    /* one statement, block header or end (answered by DONE) */
    FRAME_SCRIPT,   /* a whole script (aloft lua; answered by DONE) */
    FRAME_RESULT,   /* the plan's result (answered by VALUE) */
    FRAME_RET,      /* a skill call's value (answers CALL) */
    FRAME_ERR,      /* a skill call's error (answers CALL or RUN) */
    FRAME_RUN,      /* run a high-level skill's Lua (answered by VALUE or ERR) */
    FRAME_CANCEL,   /* stop the mission's VM (no answer) */
    FRAME_CLOSE,    /* the mission ended: free its VM (no answer) */
    /* plan verification (verify/verify_wire.h): worlds flown wholly in
     * the worker, answered by VWORLD per world, then VEND */
    FRAME_VERIFY = 20,
    /* worker -> host */
    FRAME_OPENED = 32, /* OPEN done: a status and a message */
    FRAME_CALL,        /* a skill call: index and arguments */
    FRAME_OUTPUT,      /* text written by print */
    FRAME_DONE,        /* BEGIN, EVENT or SCRIPT ended: status, message, usage */
    FRAME_VALUE,       /* RESULT's or RUN's value */
    FRAME_VWORLD = 50, /* VERIFY: one world's verdict */
    FRAME_VEND,        /* VERIFY: the worker's share of the worlds ended */
    FRAME_VBATCH,      /* VERIFY: VWORLD and VEND frames, several at once */
    /* a skill file's fields (worker/skill_read.h): host -> worker, its answer */
    FRAME_SKILL_READ = 24,
    FRAME_SKILL_META = 56,
} frame_type;

typedef struct frame_header {
    uint32_t len;     /* payload bytes, at most FRAME_MAX */
    uint16_t type;    /* frame_type */
    uint16_t zero;    /* must be 0 */
    uint32_t mission; /* the mission the frame belongs to */
} frame_header;

/* A frame being built (payload after the header) or read. */
typedef struct frame {
    frame_header h;
    unsigned char *buf; /* payload */
    size_t cap;
    size_t pos; /* reading: the next byte; writing: bytes written */
    bool bad;   /* a field did not fit or did not parse */
} frame;

/* Values of skill arguments and results. */
typedef enum frame_value_tag {
    FV_NIL = 0,
    FV_FALSE,
    FV_TRUE,
    FV_INT,
    FV_NUM,
    FV_STR,
    FV_OTHER, /* a table, function ...: only its Lua type travels */
} frame_value_tag;

typedef struct frame_value {
    frame_value_tag tag;
    int64_t i;
    double n;
    const char *s; /* FV_STR: points into the frame (not NUL-terminated) */
    size_t len;
    int lua_type; /* FV_OTHER */
} frame_value;

/* Starts an empty frame of TYPE for MISSION (reusing F's buffer). */
void frame_start(frame *f, frame_type type, uint32_t mission);
void frame_free(frame *f);

void frame_put_u8(frame *f, uint8_t v);
void frame_put_u32(frame *f, uint32_t v);
void frame_put_u64(frame *f, uint64_t v);
void frame_put_f64(frame *f, double v);
/* A string of at most FRAME_MAX_STR bytes (longer ones are cut). */
void frame_put_str(frame *f, const char *s, size_t len);
/* Like frame_put_str, for the host's own long texts (code): up to FRAME_MAX. */
void frame_put_text(frame *f, const char *s, size_t len);
void frame_put_value(frame *f, const frame_value *v);

/* Readers: on a short or malformed payload they return 0 / empty and set
 * F->bad, which stays set. */
uint8_t frame_get_u8(frame *f);
uint32_t frame_get_u32(frame *f);
uint64_t frame_get_u64(frame *f);
double frame_get_f64(frame *f);
const char *frame_get_str(frame *f, size_t *len);
const char *frame_get_text(frame *f, size_t *len);
bool frame_get_value(frame *f, frame_value *v);
/* True when every byte was read and nothing was bad. */
bool frame_done(const frame *f);

/* Writes the frame whole. Returns 0, or -1 (the peer is gone or the frame
 * grew past FRAME_MAX: F->bad). Never raises SIGPIPE. */
int frame_send(int fd, frame *f);

/* Makes frame_send use write(2) (the worker, whose filter allows only
 * read and write; a host gone raises SIGPIPE there, which ends it). */
void frame_plain_writes(void);

/* Reads one frame into F. TIMEOUT_MS bounds the wait for its first byte
 * (-1: forever); once it started, the rest must follow within
 * FRAME_REST_MS. Returns 1 with a frame, 0 when nothing came in time, -1
 * when the peer closed or sent a header that is not one (*WHY says which).
 * The socket may be blocking or not. */
#define FRAME_REST_MS 1000
int frame_recv(int fd, frame *f, int timeout_ms, const char **why);

/* A socket read through a buffer: a small frame, or a few, take one read
 * instead of two per frame. One thread at a time reads through it. */
typedef struct frame_reader {
    int fd;
    size_t start, end; /* buffered bytes: buf[start, end) */
    unsigned char buf[4096];
} frame_reader;

void frame_reader_init(frame_reader *r, int fd);

/* True when bytes are buffered: a poll of the socket would not see them. */
bool frame_reader_buffered(const frame_reader *r);

/* True when a whole frame is buffered (or a header that is not one), which
 * frame_read returns without waiting. */
bool frame_reader_whole(const frame_reader *r);

/* As frame_recv, through R's buffer. A timed wait (TIMEOUT_MS >= 0) polls
 * before it reads; an untimed one reads at once (a blocking socket waits
 * there). */
int frame_read(frame_reader *r, frame *f, int timeout_ms, const char **why);

#endif
