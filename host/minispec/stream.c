/*
 * The stream parser: the whole-plan parser's units over a buffer that grows
 * as chunks arrive. A unit that the bytes so far do not prove complete is
 * read again on the next call that brings a byte able to change it (bytes
 * that only lengthen its last token are scanned once: unit.c).
 */
#include "minispec/parser.h"
#include "minispec/stream.h"

#include <stdlib.h>
#include <string.h>

struct ms_stream {
    ms_parser P;
    ms_buf input;
    bool final, done;
};

ms_stream *ms_stream_new(const skill_registry *reg, const ms_options *opts)
{
    ms_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    ms_options plan = opts ? *opts : (ms_options){0};
    plan.nparams = 0;
    ms_parser_init(&s->P, reg, &plan, false);
    return s;
}

void ms_stream_free(ms_stream *s)
{
    if (!s) return;
    ms_parser_free(&s->P);
    ms_buf_free(&s->input);
    free(s);
}

void ms_stream_feed(ms_stream *s, const char *chunk, size_t len)
{
    if (s->final || len == 0) return;
    ms_buf_add(&s->input, chunk, len);
    ms_parser_set_input(&s->P, s->input.data, s->input.len, false);
}

void ms_stream_finish(ms_stream *s)
{
    s->final = true;
    ms_parser_set_input(&s->P, s->input.data ? s->input.data : "", s->input.len, true);
}

ms_event_kind ms_stream_next(ms_stream *s, ms_event *ev)
{
    if (s->done) {
        memset(ev, 0, sizeof *ev);
        return ev->kind = MS_EV_DONE;
    }
    if (!s->input.data && !s->final) {
        memset(ev, 0, sizeof *ev);
        return ev->kind = MS_EV_NONE;
    }
    ms_event_kind k = ms_parser_step(&s->P, ev);
    if (k == MS_EV_DONE) s->done = true;
    return k;
}

size_t ms_stream_consumed(const ms_stream *s)
{
    return s->P.lx.at.pos;
}

size_t ms_stream_work(const ms_stream *s)
{
    return s->P.lx.work;
}

const char *ms_stream_dialect(const ms_stream *s)
{
    return ms_parser_dialect(&s->P);
}
