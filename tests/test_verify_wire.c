/*
 * Plan verification's messages between the host and a worker
 * (verify/verify_wire.h): the request arrives whole, and the host refuses
 * every verdict a worker may not send, at the limits of what verify_world
 * writes (just inside passes, just outside is refused).
 * labels: safety verify */
#include "check.h"
#include "loader/loader.h"
#include "verify/verify_wire.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A frame built here, read back as the other end would. */
static void as_received(frame *f)
{
    f->h.len = (uint32_t)f->pos;
    f->pos = 0;
    f->bad = false;
}

/* The fields of a verdict frame, any of them wrong on purpose. */
typedef struct verdict {
    uint32_t world;
    uint8_t kind;
    const char *reason;
    size_t reason_len;
    int excursion; /* 0 none, else EXC follows */
    double exc;
    uint32_t nbranch; /* branch items, each ITEM_LEN bytes of 'b' */
    size_t item_len;
    bool trailing;
} verdict;

/* The typed verdict of the last decode. */
static verify_verdict last;

static int decode(const verdict *v, int expected, int worlds, cJSON **entry)
{
    frame f = {0};
    frame_start(&f, FRAME_VWORLD, 1);
    frame_put_u32(&f, v->world);
    frame_put_u8(&f, v->kind);
    if (v->kind != VERIFY_OK || v->reason) {
        frame_put_str(&f, v->reason ? v->reason : "", v->reason ? v->reason_len : 0);
        frame_put_u8(&f, (uint8_t)v->excursion);
        if (v->excursion) frame_put_f64(&f, v->exc);
        frame_put_u32(&f, 0); /* changes */
        char *item = calloc(1, v->item_len + 1);
        memset(item, 'b', v->item_len);
        frame_put_u32(&f, v->nbranch);
        for (uint32_t i = 0; i < v->nbranch; i++)
            frame_put_str(&f, item, v->item_len);
        free(item);
        frame_put_u32(&f, 0); /* calls */
    }
    if (v->trailing) frame_put_u8(&f, 0);
    as_received(&f);
    char err[256];
    *entry = NULL;
    memset(&last, 0x5a, sizeof last);
    int rc = verify_wire_get_world(&f, expected, worlds, &last, entry, err, sizeof err);
    frame_free(&f);
    return rc;
}

static void check_verdicts(void)
{
    char reason[1300];
    memset(reason, 'r', sizeof reason);
    verdict ok = {.world = 3,
                  .kind = VERIFY_VIOLATION,
                  .reason = reason,
                  .reason_len = 1200,
                  .nbranch = 201,
                  .item_len = 1200};
    cJSON *e;
    CHECK(decode(&ok, 3, 10, &e) == 0 && e, "the longest verdict verify_world writes");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "branch");
    CHECK(cJSON_GetArraySize(b) == 201);
    CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(e, "kind")->valuestring, "violation") == 0);
    /* the typed verdict: the kind, and the whole reason of 1200 bytes */
    CHECK(last.kind == VERIFY_VIOLATION && strlen(last.reason) == 1200 &&
              memcmp(last.reason, reason, 1200) == 0,
          "typed verdict: kind %d, reason of %zu bytes", last.kind, strlen(last.reason));
    cJSON_Delete(e);

    verdict v = ok;
    v.reason_len = 1201;
    CHECK(decode(&v, 3, 10, &e) == -1 && !e, "a reason one byte too long");
    v = ok, v.nbranch = 202;
    CHECK(decode(&v, 3, 10, &e) == -1, "one branch item too many");
    v = ok, v.item_len = 1201;
    CHECK(decode(&v, 3, 10, &e) == -1, "a branch item one byte too long");
    v = ok, v.world = 4;
    CHECK(decode(&v, 3, 10, &e) == -1, "a world out of order");
    v = ok, v.world = 2;
    CHECK(decode(&v, 3, 10, &e) == -1, "a world again");
    v = ok;
    CHECK(decode(&v, 3, 3, &e) == -1, "a world past the last");
    v = ok, v.kind = VERIFY_WATCH, v.excursion = 1, v.exc = 12.5;
    CHECK(decode(&v, 3, 10, &e) == 0 && e, "the last kind, an excursion");
    cJSON_Delete(e);
    v.kind = VERIFY_WATCH + 1;
    CHECK(decode(&v, 3, 10, &e) == -1, "a kind that is none");
    const double bad[] = {NAN, INFINITY, -1, 2e9};
    for (int i = 0; i < 4; i++) {
        v = ok, v.excursion = 1, v.exc = bad[i];
        CHECK(decode(&v, 3, 10, &e) == -1, "excursion %g", bad[i]);
    }
    v = ok, v.trailing = true;
    CHECK(decode(&v, 3, 10, &e) == -1, "bytes after the verdict");
    reason[5] = '\0';
    v = ok;
    CHECK(decode(&v, 3, 10, &e) == -1, "a NUL byte in the reason");

    verdict pass = {.world = 0, .kind = VERIFY_OK};
    CHECK(decode(&pass, 0, 1, &e) == 0 && !e, "a passing world");
    CHECK(last.kind == VERIFY_OK && last.reason[0] == '\0', "a passing world has no reason");
    pass.trailing = true;
    CHECK(decode(&pass, 0, 1, &e) == -1, "a passing world with a byte more");
    pass.trailing = false, pass.reason = "", pass.reason_len = 0;
    CHECK(decode(&pass, 0, 1, &e) == -1, "a passing world with details");
}

static void check_end(void)
{
    frame f = {0};
    verify_wire_end end;
    char msg[64], err[128];
    verify_wire_put_end(&f, 1, VERIFY_WIRE_FAILED, "out of memory");
    as_received(&f);
    CHECK(verify_wire_get_end(&f, &end, msg, sizeof msg, err, sizeof err) == 0 &&
          end == VERIFY_WIRE_FAILED && strcmp(msg, "out of memory") == 0);
    frame_start(&f, FRAME_VEND, 1);
    frame_put_u8(&f, VERIFY_WIRE_FAILED + 1);
    frame_put_str(&f, "", 0);
    as_received(&f);
    CHECK(verify_wire_get_end(&f, &end, msg, sizeof msg, err, sizeof err) == -1,
          "an end that is none");
    frame_free(&f);
}

/* A batch of frames: each whole, of this request, with its own length. */
static int batch_count(const frame_header *wrong, size_t cut)
{
    frame b = {0}, one = {0};
    frame_start(&b, FRAME_VBATCH, 7);
    for (int i = 0; i < 2; i++) {
        frame_start(&one, FRAME_VWORLD, 7);
        frame_put_u32(&one, (uint32_t)i);
        frame_put_u8(&one, VERIFY_OK);
        frame_header h = one.h;
        h.len = (uint32_t)one.pos;
        if (wrong && i == 1) h = *wrong;
        unsigned char bytes[64];
        memcpy(bytes, &h, sizeof h);
        memcpy(bytes + sizeof h, one.buf, one.pos);
        frame_put_text(&b, (const char *)bytes, sizeof h + one.pos - (i == 1 ? cut : 0));
    }
    as_received(&b);
    frame inner;
    int n = 0, rc;
    while ((rc = verify_wire_next_in_batch(&b, &inner)) == 1) {
        verify_verdict k;
        cJSON *e;
        char err[128];
        if (verify_wire_get_world(&inner, n, 2, &k, &e, err, sizeof err) == 0) n++;
    }
    frame_free(&b);
    frame_free(&one);
    return rc < 0 ? -1 : n;
}

static void check_batches(void)
{
    CHECK(batch_count(NULL, 0) == 2, "two worlds in one batch");
    frame_header h = {.len = 5, .type = FRAME_VWORLD, .zero = 0, .mission = 7};
    CHECK(batch_count(&h, 0) == 2, "the right header, written out");
    h.len = 6;
    CHECK(batch_count(&h, 0) == -1, "a length one byte too long");
    h.len = 4;
    CHECK(batch_count(&h, 0) == -1, "a length one byte too short");
    h.len = 5, h.mission = 8;
    CHECK(batch_count(&h, 0) == -1, "another request's frame");
    h.mission = 7, h.zero = 1;
    CHECK(batch_count(&h, 0) == -1, "a header that is not one");
    CHECK(batch_count(NULL, 5) == -1, "a frame shorter than its header");
}

/* The request carries everything a confined worker needs, unchanged. */
static void check_request(void)
{
    static const char skill_text[] =
        "return {name = 'hop', description = 'up and down', args = {}, returns = 'bool',\n"
        "run = function() move_up(20) move_down(20) return true end}\n";
    skill_registry *reg = registry_new();
    char err[256];
    CHECK(reg && loader_add_builtins(reg, err, sizeof err) == 0);
    CHECK(loader_load_source(reg, "/somewhere/hop.lua", skill_text, strlen(skill_text), false, err,
                             sizeof err) == 0,
          "%s", err);
    loader_finalize(reg, NULL, NULL);
    static scene sc;
    static const char json[] =
        "{\"drone\": {\"x\": 10, \"y\": -20, \"z\": 100, \"yaw\": 30},"
        " \"wind\": {\"speed\": 40, \"heading\": 90, \"gust\": 10},"
        " \"objects\": [{\"class\": \"apple\", \"x\": 0, \"y\": 250, \"z\": 80, \"w\": 8, \"d\": "
        "8, \"h\": 9, \"color\": \"red\"}]}";
    CHECK(scene_parse(&sc, json, strlen(json), err, sizeof err) == 0, "%s", err);
    drone_pose from = {1, 2, 3, 4};
    verify_opts o = {.reg = reg,
                     .scene = &sc,
                     .from = &from,
                     .plan = "hop()",
                     .plan_len = 5,
                     .worlds = 7,
                     .seed = 99,
                     .limits = {.max_instructions = 5, .max_memory = 6, .timeout_ms = 7},
                     .max_loop = 8};
    frame f = {0};
    CHECK(verify_wire_put_request(&f, 1, &o, 2, 3, err, sizeof err) == 0, "%s", err);
    as_received(&f);
    verify_wire_request r;
    CHECK(verify_wire_get_request(&f, &r, err, sizeof err) == 0, "%s", err);
    CHECK(r.first == 2 && r.step == 3 && r.opts.worlds == 7 && r.opts.seed == 99);
    CHECK(r.opts.limits.max_instructions == 5 && r.opts.limits.max_memory == 6 &&
          r.opts.limits.timeout_ms == 7 && r.opts.max_loop == 8);
    CHECK(r.opts.from && r.opts.from->yaw == 4 && r.opts.plan_len == 5 &&
          memcmp(r.opts.plan, "hop()", 5) == 0);
    CHECK(r.scene && memcmp(r.scene, &sc, offsetof(scene, objects)) == 0 &&
              memcmp(&r.scene->objects[0], &sc.objects[0], sizeof sc.objects[0]) == 0,
          "the scene as sent");
    CHECK(r.nskills == 1 && r.skills[0].source_len == strlen(skill_text) &&
              memcmp(r.skills[0].source, skill_text, strlen(skill_text)) == 0,
          "the user skill's text, and only it");
    verify_wire_request_free(&r);

    /* the share must be inside the worlds */
    o.worlds = 2;
    CHECK(verify_wire_put_request(&f, 1, &o, 2, 3, err, sizeof err) == 0);
    as_received(&f);
    CHECK(verify_wire_get_request(&f, &r, err, sizeof err) == -1, "first world past the last");
    verify_wire_request_free(&r);
    frame_free(&f);
    registry_free(reg);
}

int main(void)
{
    check_verdicts();
    check_end();
    check_batches();
    check_request();
    return failures ? 1 : 0;
}
