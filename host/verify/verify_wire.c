/*
 * Plan verification's messages between the host and a worker (see
 * verify_wire.h).
 */
#include "verify/verify_wire.h"

#include "errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest lists and texts verify_world writes (verify.c): the kept
 * items plus one "... N more" line; a reason of at most VERIFY_REASON_MAX
 * bytes. */
#define WIRE_MAX_CHANGES (SCENE_MAX_OBJECTS + 4)
#define WIRE_MAX_BRANCH 201
#define WIRE_MAX_CALLS 101
#define WIRE_MAX_ITEM 1200

/* ---- the request ------------------------------------------------------------ */

static void put_pose(frame *f, const drone_pose *p)
{
    frame_put_f64(f, p->x);
    frame_put_f64(f, p->y);
    frame_put_f64(f, p->z);
    frame_put_f64(f, p->yaw);
}

static void get_pose(frame *f, drone_pose *p)
{
    p->x = frame_get_f64(f);
    p->y = frame_get_f64(f);
    p->z = frame_get_f64(f);
    p->yaw = frame_get_f64(f);
}

static void put_name(frame *f, const char *s, size_t max)
{
    frame_put_str(f, s, strnlen(s, max - 1));
}

/* A fixed-size name of the scene: refused when it does not fit. */
static void get_name(frame *f, char *dst, size_t max)
{
    size_t len;
    const char *s = frame_get_str(f, &len);
    if (len >= max || (len && memchr(s, '\0', len))) {
        f->bad = true;
        len = 0;
    }
    if (len) memcpy(dst, s, len);
    dst[len] = '\0';
}

/* The scene field by field (no padding bytes travel). */
static void put_scene(frame *f, const scene *s)
{
    put_pose(f, &s->start);
    frame_put_f64(f, s->speed);
    frame_put_f64(f, s->yaw_rate);
    frame_put_u32(f, (uint32_t)s->battery);
    const scene_camera *c = &s->camera;
    frame_put_f64(f, c->hfov);
    frame_put_f64(f, c->vfov);
    frame_put_u32(f, (uint32_t)c->width);
    frame_put_u32(f, (uint32_t)c->height);
    frame_put_f64(f, c->range);
    frame_put_u8(f, c->occlusion);
    const scene_limits *l = &s->limits;
    frame_put_f64(f, l->geofence_radius);
    frame_put_f64(f, l->min_z);
    frame_put_f64(f, l->max_z);
    frame_put_f64(f, l->max_move);
    frame_put_u32(f, (uint32_t)l->battery_reserve);
    frame_put_f64(f, s->noise_position_cm);
    frame_put_f64(f, s->noise_miss_rate);
    frame_put_f64(f, s->wind.speed);
    frame_put_f64(f, s->wind.heading);
    frame_put_f64(f, s->wind.gust);
    frame_put_u32(f, (uint32_t)s->nobjects);
    for (int i = 0; i < s->nobjects; i++) {
        const scene_object *o = &s->objects[i];
        put_name(f, o->id, sizeof o->id);
        put_name(f, o->cls, sizeof o->cls);
        put_name(f, o->color, sizeof o->color);
        const double v[6] = {o->x, o->y, o->z, o->w, o->d, o->h};
        for (int k = 0; k < 6; k++)
            frame_put_f64(f, v[k]);
    }
}

static void get_scene(frame *f, scene *s)
{
    memset(s, 0, sizeof *s);
    get_pose(f, &s->start);
    s->speed = frame_get_f64(f);
    s->yaw_rate = frame_get_f64(f);
    s->battery = (int)frame_get_u32(f);
    scene_camera *c = &s->camera;
    c->hfov = frame_get_f64(f);
    c->vfov = frame_get_f64(f);
    c->width = (int)frame_get_u32(f);
    c->height = (int)frame_get_u32(f);
    c->range = frame_get_f64(f);
    c->occlusion = frame_get_u8(f) != 0;
    scene_limits *l = &s->limits;
    l->geofence_radius = frame_get_f64(f);
    l->min_z = frame_get_f64(f);
    l->max_z = frame_get_f64(f);
    l->max_move = frame_get_f64(f);
    l->battery_reserve = (int)frame_get_u32(f);
    s->noise_position_cm = frame_get_f64(f);
    s->noise_miss_rate = frame_get_f64(f);
    s->wind.speed = frame_get_f64(f);
    s->wind.heading = frame_get_f64(f);
    s->wind.gust = frame_get_f64(f);
    uint32_t n = frame_get_u32(f);
    if (n > SCENE_MAX_OBJECTS) f->bad = true;
    for (uint32_t i = 0; i < n && !f->bad; i++) {
        scene_object *o = &s->objects[i];
        get_name(f, o->id, sizeof o->id);
        get_name(f, o->cls, sizeof o->cls);
        get_name(f, o->color, sizeof o->color);
        double *v[6] = {&o->x, &o->y, &o->z, &o->w, &o->d, &o->h};
        for (int k = 0; k < 6; k++)
            *v[k] = frame_get_f64(f);
        s->nobjects = (int)i + 1;
    }
}

static bool user_skill(const skill *s)
{
    return s->level == SKILL_HIGH && !s->builtin && s->source;
}

int verify_wire_put_request(frame *f, uint32_t id, const verify_opts *o, uint32_t first,
                            uint32_t step, char *err, size_t errlen)
{
    frame_start(f, FRAME_VERIFY, id);
    frame_put_u64(f, o->seed);
    frame_put_u32(f, (uint32_t)o->worlds);
    frame_put_u32(f, first);
    frame_put_u32(f, step);
    frame_put_u64(f, o->limits.max_instructions);
    frame_put_u64(f, o->limits.max_memory);
    frame_put_u64(f, o->limits.timeout_ms);
    frame_put_u64(f, o->limits.max_output);
    frame_put_u32(f, (uint32_t)o->max_loop);
    frame_put_u8(f, o->from != NULL);
    if (o->from) put_pose(f, o->from);
    frame_put_text(f, o->plan, o->plan_len);
    put_scene(f, o->scene);
    uint32_t n = 0;
    size_t count = o->reg ? registry_count(o->reg) : 0;
    for (size_t i = 0; i < count; i++)
        n += user_skill(registry_at(o->reg, i));
    frame_put_u32(f, n);
    for (size_t i = 0; i < count; i++) {
        const skill *s = registry_at(o->reg, i);
        if (!user_skill(s)) continue;
        frame_put_str(f, s->path ? s->path : s->name, strlen(s->path ? s->path : s->name));
        frame_put_text(f, s->source, strlen(s->source));
    }
    if (f->bad || o->plan_len > FRAME_MAX)
        return errmsg_set(err, errlen,
                          "the plan, the scene and the user skills do not fit in one "
                          "message to a worker (%u bytes at most)",
                          FRAME_MAX);
    return 0;
}

int verify_wire_get_request(frame *f, verify_wire_request *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    verify_opts *o = &r->opts;
    o->seed = frame_get_u64(f);
    uint32_t worlds = frame_get_u32(f);
    r->first = frame_get_u32(f);
    r->step = frame_get_u32(f);
    o->limits.max_instructions = frame_get_u64(f);
    o->limits.max_memory = (size_t)frame_get_u64(f);
    o->limits.timeout_ms = frame_get_u64(f);
    o->limits.max_output = (size_t)frame_get_u64(f);
    o->max_loop = (int)frame_get_u32(f);
    if (frame_get_u8(f)) {
        get_pose(f, &r->from);
        o->from = &r->from;
    }
    o->plan = frame_get_text(f, &o->plan_len);
    r->scene = malloc(sizeof *r->scene);
    if (!r->scene) return errmsg_set(err, errlen, "out of memory");
    get_scene(f, r->scene);
    o->scene = r->scene;
    r->nskills = frame_get_u32(f);
    if (r->nskills > 4096) f->bad = true;
    if (!f->bad && r->nskills) r->skills = calloc(r->nskills, sizeof *r->skills);
    if (!f->bad && r->nskills && !r->skills) return errmsg_set(err, errlen, "out of memory");
    for (uint32_t i = 0; i < r->nskills && !f->bad; i++) {
        verify_wire_skill *k = &r->skills[i];
        k->path = frame_get_str(f, &k->path_len);
        k->source = frame_get_text(f, &k->source_len);
    }
    o->worlds = (int)worlds;
    if (!frame_done(f) || worlds < 1 || worlds > VERIFY_MAX_WORLDS || r->step < 1 ||
        r->first >= worlds)
        return errmsg_set(err, errlen, "a malformed verification request");
    return 0;
}

void verify_wire_request_free(verify_wire_request *r)
{
    free(r->scene);
    free(r->skills);
    memset(r, 0, sizeof *r);
}

/* ---- one world's verdict --------------------------------------------------- */

static void put_list(frame *f, const cJSON *arr)
{
    frame_put_u32(f, (uint32_t)cJSON_GetArraySize(arr));
    for (const cJSON *s = arr ? arr->child : NULL; s; s = s->next) {
        const char *t = cJSON_IsString(s) ? s->valuestring : "";
        frame_put_str(f, t, strlen(t));
    }
}

void verify_wire_put_world(frame *f, uint32_t id, const cJSON *e, verify_kind kind)
{
    frame_start(f, FRAME_VWORLD, id);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "world");
    frame_put_u32(f, cJSON_IsNumber(w) ? (uint32_t)w->valueint : 0);
    frame_put_u8(f, (uint8_t)kind);
    if (kind == VERIFY_OK) return;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "reason");
    const char *reason = cJSON_IsString(r) ? r->valuestring : "";
    frame_put_str(f, reason, strlen(reason));
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, "excursion_cm");
    frame_put_u8(f, cJSON_IsNumber(x));
    if (cJSON_IsNumber(x)) frame_put_f64(f, x->valuedouble);
    put_list(f, cJSON_GetObjectItemCaseSensitive(e, "changes"));
    put_list(f, cJSON_GetObjectItemCaseSensitive(e, "branch"));
    put_list(f, cJSON_GetObjectItemCaseSensitive(e, "calls"));
}

/* A string the worker sent, as a new cJSON string; NULL (F->bad) when it is
 * longer than MAX or holds a NUL byte. */
static cJSON *get_string(frame *f, size_t max)
{
    size_t len;
    const char *s = frame_get_str(f, &len);
    if (f->bad || len > max || memchr(s, '\0', len)) {
        f->bad = true;
        return NULL;
    }
    char *t = malloc(len + 1);
    if (!t) {
        f->bad = true;
        return NULL;
    }
    memcpy(t, s, len);
    t[len] = '\0';
    cJSON *c = cJSON_CreateString(t);
    free(t);
    if (!c) f->bad = true;
    return c;
}

static cJSON *get_list(frame *f, uint32_t max)
{
    uint32_t n = frame_get_u32(f);
    if (n > max) f->bad = true;
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < n && !f->bad; i++) {
        cJSON *s = get_string(f, WIRE_MAX_ITEM);
        if (s) cJSON_AddItemToArray(arr, s);
    }
    return arr;
}

int verify_wire_get_world(frame *f, int expected, int worlds, verify_verdict *v, cJSON **entry,
                          char *err, size_t errlen)
{
    *entry = NULL;
    v->reason[0] = '\0';
    uint32_t w = frame_get_u32(f);
    uint8_t k = frame_get_u8(f);
    if (f->bad) return errmsg_set(err, errlen, "a malformed world");
    if (w != (uint32_t)expected || w >= (uint32_t)worlds)
        return errmsg_set(err, errlen, "world %u where world %d was due", w, expected);
    if (k > VERIFY_WATCH) return errmsg_set(err, errlen, "world %u: an unknown verdict %u", w, k);
    v->kind = (verify_kind)k;
    if (k == VERIFY_OK) {
        if (!frame_done(f))
            return errmsg_set(err, errlen, "world %u: a passing world with details", w);
        return 0;
    }
    /* The entry in verify_world's order of keys. */
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "world", w);
    cJSON *reason = get_string(f, VERIFY_REASON_MAX);
    if (reason) {
        snprintf(v->reason, sizeof v->reason, "%s", reason->valuestring);
        cJSON_AddItemToObject(e, "reason", reason);
    }
    if (frame_get_u8(f)) {
        double x = frame_get_f64(f);
        if (!isfinite(x) || x < 0 || x > 1e9) f->bad = true;
        cJSON_AddNumberToObject(e, "excursion_cm", x);
    }
    cJSON_AddStringToObject(e, "kind", verify_kind_name(v->kind));
    cJSON_AddItemToObject(e, "changes", get_list(f, WIRE_MAX_CHANGES));
    cJSON_AddItemToObject(e, "branch", get_list(f, WIRE_MAX_BRANCH));
    cJSON_AddItemToObject(e, "calls", get_list(f, WIRE_MAX_CALLS));
    if (!frame_done(f)) {
        cJSON_Delete(e);
        return errmsg_set(err, errlen, "world %u: a malformed verdict", w);
    }
    *entry = e;
    return 0;
}

/* ---- batches -------------------------------------------------------------- */

int verify_wire_next_in_batch(frame *b, frame *inner)
{
    if (b->pos == b->h.len && !b->bad) return 0;
    size_t len;
    const unsigned char *p = (const unsigned char *)frame_get_text(b, &len);
    frame_header h;
    if (b->bad || len < sizeof h) return -1;
    memcpy(&h, p, sizeof h);
    if (h.len != len - sizeof h || h.zero != 0 || h.mission != b->h.mission) return -1;
    memset(inner, 0, sizeof *inner);
    inner->h = h;
    inner->buf = (unsigned char *)p + sizeof h;
    inner->cap = h.len;
    return 1;
}

/* ---- the end of a share ---------------------------------------------------- */

void verify_wire_put_end(frame *f, uint32_t id, verify_wire_end end, const char *msg)
{
    frame_start(f, FRAME_VEND, id);
    frame_put_u8(f, (uint8_t)end);
    frame_put_str(f, msg ? msg : "", msg ? strlen(msg) : 0);
}

int verify_wire_get_end(frame *f, verify_wire_end *end, char *msg, size_t msglen, char *err,
                        size_t errlen)
{
    uint8_t e = frame_get_u8(f);
    size_t len;
    const char *s = frame_get_str(f, &len);
    if (!frame_done(f) || e > VERIFY_WIRE_FAILED || len > 1024 || memchr(s, '\0', len))
        return errmsg_set(err, errlen, "a malformed end of verification");
    *end = (verify_wire_end)e;
    snprintf(msg, msglen, "%.*s", (int)len, s);
    return 0;
}
