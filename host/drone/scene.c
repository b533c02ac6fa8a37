/*
 * Scene file parsing and validation. Each section is described by a small
 * table of keys so that the accepted keys, their types and their ranges are
 * readable in one place, and every error names the key it is about.
 */
#include "drone/scene.h"

#include "drone/heading.h"
#include "errmsg.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { K_NUM, K_INT, K_BOOL } key_kind;

typedef struct key_spec {
    const char *name;
    key_kind kind;
    double min, max; /* inclusive range for numbers */
    size_t offset;   /* into struct scene */
} key_spec;

#define NUM(name, lo, hi, field)                                                                   \
    {                                                                                              \
        name, K_NUM, lo, hi, offsetof(scene, field)                                                \
    }
#define INT(name, lo, hi, field)                                                                   \
    {                                                                                              \
        name, K_INT, lo, hi, offsetof(scene, field)                                                \
    }
#define BOOL(name, field)                                                                          \
    {                                                                                              \
        name, K_BOOL, 0, 0, offsetof(scene, field)                                                 \
    }
#define BIG 1e7

static const key_spec drone_keys[] = {
    NUM("x", -BIG, BIG, start.x),    NUM("y", -BIG, BIG, start.y),
    NUM("z", 0, BIG, start.z),       NUM("yaw", -BIG, BIG, start.yaw),
    NUM("speed", 1, 10000, speed),   NUM("yaw_rate", 1, 3600, yaw_rate),
    INT("battery", 0, 100, battery), {NULL, 0, 0, 0, 0},
};

static const key_spec camera_keys[] = {
    NUM("hfov", 1, 179, camera.hfov),
    NUM("vfov", 1, 179, camera.vfov),
    INT("width", 16, 8192, camera.width),
    INT("height", 16, 8192, camera.height),
    NUM("range", 1, BIG, camera.range),
    BOOL("occlusion", camera.occlusion),
    {NULL, 0, 0, 0, 0},
};

static const key_spec limits_keys[] = {
    NUM("geofence_radius", 1, BIG, limits.geofence_radius),
    NUM("min_z", 0, BIG, limits.min_z),
    NUM("max_z", 0, BIG, limits.max_z),
    NUM("max_move", 1, BIG, limits.max_move),
    INT("battery_reserve", 0, 100, limits.battery_reserve),
    {NULL, 0, 0, 0, 0},
};

static const key_spec noise_keys[] = {
    NUM("position_cm", 0, 10000, noise_position_cm),
    NUM("miss_rate", 0, 1, noise_miss_rate),
    {NULL, 0, 0, 0, 0},
};

static const key_spec wind_keys[] = {
    NUM("speed", 0, 10000, wind.speed),
    NUM("heading", -BIG, BIG, wind.heading),
    NUM("gust", 0, 10000, wind.gust),
    {NULL, 0, 0, 0, 0},
};

void scene_defaults(scene *s)
{
    memset(s, 0, sizeof *s);
    s->start = (drone_pose){0, 0, 100, 0};
    s->speed = 100;
    s->yaw_rate = 90;
    s->battery = 100;
    s->camera = (scene_camera){82.6, 52, 960, 720, 800, false};
    s->limits = (scene_limits){600, 30, 300, 500, 10};
}

/* Reads one section (an object of keys from TABLE) into S. */
static int parse_section(scene *s, const cJSON *sec, const char *secname, const key_spec *table,
                         char *err, size_t errlen)
{
    if (!cJSON_IsObject(sec)) return errmsg_set(err, errlen, "%s: expected an object", secname);
    for (const cJSON *it = sec->child; it; it = it->next) {
        const key_spec *k = table;
        while (k->name && strcmp(k->name, it->string) != 0)
            k++;
        if (!k->name) {
            char known[256] = "";
            for (const key_spec *q = table; q->name; q++) {
                strncat(known, q->name, sizeof known - strlen(known) - 1);
                if (q[1].name) strncat(known, ", ", sizeof known - strlen(known) - 1);
            }
            return errmsg_set(err, errlen, "%s.%s: unknown key (known: %s)", secname, it->string,
                              known);
        }
        char *field = (char *)s + k->offset;
        if (k->kind == K_BOOL) {
            if (!cJSON_IsBool(it))
                return errmsg_set(err, errlen, "%s.%s: expected true or false", secname, k->name);
            *(bool *)field = cJSON_IsTrue(it);
            continue;
        }
        if (!cJSON_IsNumber(it))
            return errmsg_set(err, errlen, "%s.%s: expected a number", secname, k->name);
        double v = it->valuedouble;
        if (!isfinite(v) || v < k->min || v > k->max)
            return errmsg_set(err, errlen, "%s.%s: %g is out of range [%g, %g]", secname, k->name,
                              v, k->min, k->max);
        if (k->kind == K_INT) {
            if (v != floor(v))
                return errmsg_set(err, errlen, "%s.%s: expected an integer, got %g", secname,
                                  k->name, v);
            *(int *)field = (int)v;
        } else {
            *(double *)field = v;
        }
    }
    return 0;
}

static int get_string(const cJSON *o, const char *key, char *out, size_t outlen, bool required,
                      const char *where, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return required ? errmsg_set(err, errlen, "%s.%s: missing", where, key) : 0;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return errmsg_set(err, errlen, "%s.%s: expected a non-empty string", where, key);
    if (strlen(v->valuestring) >= outlen)
        return errmsg_set(err, errlen, "%s.%s: longer than %zu characters", where, key, outlen - 1);
    for (const char *c = v->valuestring; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == '"' || *c == '\'')
            return errmsg_set(err, errlen, "%s.%s: '%s' may not contain spaces or quotes", where,
                              key, v->valuestring);
    snprintf(out, outlen, "%s", v->valuestring);
    return 0;
}

static int parse_object(scene_object *o, const cJSON *j, int idx, char *err, size_t errlen)
{
    static const char *const keys[] = {"class", "id", "color", "x", "y", "z", "w", "d", "h", NULL};
    char where[32];
    snprintf(where, sizeof where, "objects[%d]", idx);
    if (!cJSON_IsObject(j)) return errmsg_set(err, errlen, "%s: expected an object", where);
    for (const cJSON *it = j->child; it; it = it->next) {
        int k = 0;
        while (keys[k] && strcmp(keys[k], it->string) != 0)
            k++;
        if (!keys[k])
            return errmsg_set(err, errlen,
                              "%s.%s: unknown key (known: class, id, color, x, y, z, w, d, h)",
                              where, it->string);
    }
    memset(o, 0, sizeof *o);
    if (get_string(j, "class", o->cls, sizeof o->cls, true, where, err, errlen) ||
        get_string(j, "id", o->id, sizeof o->id, false, where, err, errlen) ||
        get_string(j, "color", o->color, sizeof o->color, false, where, err, errlen))
        return -1;
    struct {
        const char *key;
        double *dst;
        bool required, positive;
    } nums[] = {
        {"x", &o->x, true, false}, {"y", &o->y, true, false}, {"z", &o->z, false, false},
        {"w", &o->w, true, true},  {"d", &o->d, true, true},  {"h", &o->h, true, true},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, nums[i].key);
        if (!v) {
            if (nums[i].required)
                return errmsg_set(err, errlen, "%s.%s: missing", where, nums[i].key);
            continue;
        }
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > BIG)
            return errmsg_set(err, errlen, "%s.%s: expected a number", where, nums[i].key);
        if (nums[i].positive && v->valuedouble <= 0)
            return errmsg_set(err, errlen, "%s.%s: must be greater than 0, got %g", where,
                              nums[i].key, v->valuedouble);
        *nums[i].dst = v->valuedouble;
    }
    return 0;
}

/* Gives every object without an id the next free CLASS_N, counting per class
 * in file order, and rejects duplicate ids. */
static int assign_ids(scene *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->nobjects; i++) {
        scene_object *o = &s->objects[i];
        if (o->id[0]) continue;
        for (int n = 1;; n++) {
            char id[SCENE_NAME_MAX + 16];
            snprintf(id, sizeof id, "%s_%d", o->cls, n);
            if (strlen(id) >= sizeof o->id)
                return errmsg_set(err, errlen, "objects[%d].class: too long to number", i);
            if (!scene_find(s, id)) {
                memcpy(o->id, id, strlen(id) + 1);
                break;
            }
        }
    }
    for (int i = 0; i < s->nobjects; i++)
        for (int j = i + 1; j < s->nobjects; j++)
            if (strcmp(s->objects[i].id, s->objects[j].id) == 0)
                return errmsg_set(err, errlen,
                                  "objects[%d].id: '%s' is already used by objects[%d]", j,
                                  s->objects[j].id, i);
    return 0;
}

int scene_parse(scene *s, const char *json, size_t len, char *err, size_t errlen)
{
    scene_defaults(s);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        int line = 1, col = 1;
        for (const char *p = json; end && p < end && p < json + len; p++) {
            if (*p == '\n')
                line++, col = 1;
            else
                col++;
        }
        return errmsg_set(err, errlen, "%d:%d: not valid JSON", line, col);
    }
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        errmsg_set(err, errlen, "expected a JSON object at the top level");
        goto done;
    }
    static const struct {
        const char *name;
        const key_spec *table;
    } sections[] = {{"drone", drone_keys},
                    {"camera", camera_keys},
                    {"limits", limits_keys},
                    {"noise", noise_keys},
                    {"wind", wind_keys}};
    bool have_objects = false;
    for (const cJSON *it = root->child; it; it = it->next) {
        size_t k = 0;
        size_t nsec = sizeof sections / sizeof sections[0];
        while (k < nsec && strcmp(sections[k].name, it->string) != 0)
            k++;
        if (k < nsec) {
            if (parse_section(s, it, sections[k].name, sections[k].table, err, errlen)) goto done;
        } else if (strcmp(it->string, "objects") == 0) {
            have_objects = true;
            if (!cJSON_IsArray(it)) {
                errmsg_set(err, errlen, "objects: expected an array");
                goto done;
            }
            int n = cJSON_GetArraySize(it);
            if (n > SCENE_MAX_OBJECTS) {
                errmsg_set(err, errlen, "objects: %d objects, at most %d", n, SCENE_MAX_OBJECTS);
                goto done;
            }
            int i = 0;
            for (const cJSON *o = it->child; o; o = o->next, i++)
                if (parse_object(&s->objects[i], o, i, err, errlen)) goto done;
            s->nobjects = n;
        } else if (strcmp(it->string, "description") != 0 && strcmp(it->string, "_comment") != 0) {
            errmsg_set(err, errlen,
                       "%s: unknown key (known: drone, camera, limits, noise, wind, objects)",
                       it->string);
            goto done;
        }
    }
    if (!have_objects) {
        errmsg_set(err, errlen, "objects: missing (give \"objects\": [] for an empty world)");
        goto done;
    }
    if (s->limits.min_z > s->limits.max_z) {
        errmsg_set(err, errlen, "limits.min_z: %g is above limits.max_z %g", s->limits.min_z,
                   s->limits.max_z);
        goto done;
    }
    s->start.yaw = heading_wrap(s->start.yaw);
    if (assign_ids(s, err, errlen)) goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int scene_load(scene *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errmsg_set(err, errlen, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            if (cap >= (8u << 20)) {
                free(buf);
                fclose(f);
                return errmsg_set(err, errlen, "%s: larger than 8 MiB", path);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return errmsg_set(err, errlen, "%s: out of memory", path);
    char msg[512];
    int rc = scene_parse(s, buf, len, msg, sizeof msg);
    free(buf);
    if (rc) return errmsg_set(err, errlen, "%s: %s", path, msg);
    return 0;
}

const scene_object *scene_find(const scene *s, const char *id)
{
    for (int i = 0; i < s->nobjects; i++)
        if (strcmp(s->objects[i].id, id) == 0) return &s->objects[i];
    return NULL;
}
