/*
 * A skill file's fields between a worker and the host (host/worker/
 * skill_meta.h, skill_read.h): what the worker reads from the table comes
 * back whole; an answer the host cannot trust (a text longer than its field,
 * a type that is no Lua type, more or fewer arguments than the count, a
 * flag that is not 0 or 1, text for a field that is no string, bytes left
 * over, a frame cut short) is refused; and a read through a real worker
 * (the aloft program) gives the fields a read in this process gives.
 *
 * labels: safety sandbox skill_read
 */
#include "check.h"

#include "worker/skill_meta.h"
#include "worker/skill_read.h"
#include "worker/vm.h"

#include <lua.h>
#include <stdlib.h>
#include <string.h>

static const char skill_src[] =
    "return {name='orbit', description='fly around', abbr='ob', returns='bool',\n"
    "  args={{name='radius', type='float'}, {name='laps', type='int', optional=true}},\n"
    "  minispec='->True'}\n";

static const sandbox_limits lim = {
    .max_instructions = 1000000, .max_memory = 4u << 20, .timeout_ms = 2000};

static void same(const skill_meta *a, const skill_meta *b, const char *what)
{
    CHECK(a->type == b->type && a->args_type == b->args_type && a->nargs == b->nargs &&
              a->nread == b->nread && a->run_type == b->run_type,
          "%s", what);
    const skill_meta_text *ta[] = {&a->name, &a->description, &a->abbr, &a->returns, &a->minispec};
    const skill_meta_text *tb[] = {&b->name, &b->description, &b->abbr, &b->returns, &b->minispec};
    for (int i = 0; i < 5; i++)
        CHECK(ta[i]->type == tb[i]->type && ta[i]->len == tb[i]->len &&
                  (!ta[i]->len || memcmp(ta[i]->text, tb[i]->text, ta[i]->len) == 0),
              "%s: text field %d", what, i);
    for (int i = 0; i < a->nread && i < b->nread; i++)
        CHECK(a->args[i].type == b->args[i].type && a->args[i].optional == b->args[i].optional &&
                  a->args[i].name.len == b->args[i].name.len &&
                  strcmp(a->args[i].tname.text, b->args[i].tname.text) == 0,
              "%s: args[%d]", what, i + 1);
}

/* Puts M in a frame and reads it back as the host does. */
static bool travels(const skill_meta *m, skill_meta *out)
{
    frame f = {0};
    frame_start(&f, FRAME_SKILL_META, 1);
    skill_meta_put(&f, m);
    f.h.len = (uint32_t)f.pos;
    f.pos = 0;
    bool ok = skill_meta_get(&f, out);
    frame_free(&f);
    return ok;
}

/* A frame of M, changed by CHANGE (which may write bytes past it), read. */
static bool survives(const skill_meta *m, void (*change)(frame *f))
{
    frame f = {0};
    frame_start(&f, FRAME_SKILL_META, 1);
    skill_meta_put(&f, m);
    change(&f);
    f.h.len = (uint32_t)f.pos;
    f.pos = 0;
    skill_meta out;
    bool ok = skill_meta_get(&f, &out);
    skill_meta_free(&out);
    frame_free(&f);
    return ok;
}

static void extra_byte(frame *f)
{
    frame_put_u8(f, 0);
}

static void cut_short(frame *f)
{
    f->pos--;
}

static void check_refused(const skill_meta *good)
{
    skill_meta m = *good;
    CHECK(!survives(&m, extra_byte), "bytes left over");
    CHECK(!survives(&m, cut_short), "a frame cut short");

    /* a name one byte longer than the host's field holds */
    char longname[SKILL_META_NAME_SIZE + 2];
    memset(longname, 'a', sizeof longname);
    m = *good;
    m.name.text = longname;
    m.name.len = SKILL_META_NAME_SIZE;
    skill_meta out;
    CHECK(travels(&m, &out), "a name at its field's size passes (the host says too long)");
    skill_meta_free(&out);
    m.name.len = SKILL_META_NAME_SIZE + 1;
    CHECK(!travels(&m, &out), "a name past its field's size");
    skill_meta_free(&out);

    m = *good;
    m.type = LUA_NUMTYPES;
    CHECK(!travels(&m, &out), "a type that is no Lua type");
    skill_meta_free(&out);
    m.type = LUA_NUMTYPES - 1;
    CHECK(travels(&m, &out), "the last Lua type");
    skill_meta_free(&out);

    m = *good;
    m.description.type = LUA_TNUMBER; /* with its text still there */
    CHECK(!travels(&m, &out), "text for a field that is no string");
    skill_meta_free(&out);

    m = *good;
    m.nread = 1; /* args has two */
    CHECK(!travels(&m, &out), "fewer arguments than the count");
    skill_meta_free(&out);
    m.nargs = 1;
    CHECK(travels(&m, &out), "one argument of one");
    skill_meta_free(&out);
    m.nargs = SKILL_MAX_ARGS + 1; /* refused by count: none may come */
    CHECK(!travels(&m, &out), "arguments sent past the count the host refuses");
    skill_meta_free(&out);
    m.nread = 0;
    CHECK(travels(&m, &out) && out.nargs == SKILL_MAX_ARGS + 1, "a count past the limit, alone");
    skill_meta_free(&out);

    m = *good;
    m.args[1].optional = true;
    frame f = {0};
    frame_start(&f, FRAME_SKILL_META, 1);
    skill_meta_put(&f, &m);
    /* the flag of args[2] is the byte before returns= (type, length, text) */
    size_t at = f.pos - (1 + 4 + m.returns.len) - 1 - (1 + 4 + m.minispec.len) - 1;
    CHECK(f.buf[at] == 1, "the optional flag where it was put");
    f.buf[at] = 2;
    f.h.len = (uint32_t)f.pos;
    f.pos = 0;
    CHECK(!skill_meta_get(&f, &out), "a flag that is neither 0 nor 1");
    skill_meta_free(&out);
    frame_free(&f);
}

int main(void)
{
    skill_meta here;
    char err[512] = "";
    CHECK(skill_meta_run_here("orbit.lua", skill_src, strlen(skill_src), &lim, &here, err,
                              sizeof err) == 0,
          "%s", err);
    CHECK(here.type == LUA_TTABLE && here.nargs == 2 && here.nread == 2 &&
          strcmp(here.name.text, "orbit") == 0 && here.args[1].optional &&
          strcmp(here.args[0].tname.text, "float") == 0 && here.run_type == LUA_TNIL &&
          strcmp(here.minispec.text, "->True") == 0);

    skill_meta back;
    CHECK(travels(&here, &back), "the fields travel");
    same(&here, &back, "after a frame");
    skill_meta_free(&back);

    check_refused(&here);

    /* through the aloft program's own worker */
    const char *prog = getenv("ALOFT");
    if (prog) {
        vm_set_worker_program(prog);
        skill_meta there;
        CHECK(skill_meta_read_in_worker(NULL, "orbit.lua", skill_src, strlen(skill_src), &lim,
                                        &there, err, sizeof err) == 0,
              "%s", err);
        same(&here, &there, "read in a worker");
        skill_meta_free(&there);
        static const char bad[] = "return {name='x' ..";
        CHECK(skill_meta_read_in_worker(NULL, "dir/bad.lua", bad, strlen(bad), &lim, &there, err,
                                        sizeof err) != 0 &&
                  strstr(err, "dir/bad.lua:1:") == err,
              "a syntax error in a worker: %s", err);
        skill_meta_free(&there);
    } else {
        fprintf(stderr, "ALOFT not set: the read through a worker was not tried\n");
    }
    skill_meta_free(&here);
    return failures ? 1 : 0;
}
