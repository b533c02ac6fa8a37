/*
 * The suite's success checks in C, key for key as run_suite.py judges them,
 * so that `aloft eval` needs no Python. Every expectation that cannot be
 * judged (unknown object, malformed key, report without a pose) is a
 * failure: a check must never pass by not looking.
 */
#include "drone/heading.h"
#include "eval/check.h"

#include <stdarg.h>
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_MAX_ID 128

typedef struct check_obj {
    char id[CHECK_MAX_ID];
    const cJSON *o;
} check_obj;

typedef struct judge {
    const cJSON *report;
    check_obj *objs;
    int n_objs;
    int fails;
    char *why;
    size_t whylen, used;
} judge;

static void fail(judge *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(judge *j, const char *fmt, ...)
{
    j->fails++;
    if (!j->why || j->whylen == 0 || j->used + 1 >= j->whylen) return;
    if (j->used > 0) {
        int n = snprintf(j->why + j->used, j->whylen - j->used, "; ");
        j->used += (size_t)n;
        if (j->used + 1 >= j->whylen) {
            j->used = j->whylen - 1;
            return;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->why + j->used, j->whylen - j->used, fmt, ap);
    va_end(ap);
    if (n > 0) j->used += (size_t)n;
    if (j->used >= j->whylen) j->used = j->whylen - 1;
}

static double num(const cJSON *o, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static bool id_used(const check_obj *objs, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(objs[i].id, id) == 0) return true;
    return false;
}

/* Instance ids as the simulator assigns them: explicit ids first, then
 * CLASS_N with the smallest N not taken, in the scene's order. */
static int objects_by_id(judge *j, const cJSON *scene)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(scene, "objects");
    int n = cJSON_GetArraySize(list);
    j->objs = calloc((size_t)(n > 0 ? n : 1), sizeof *j->objs);
    if (!j->objs) return -1;
    int k = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, list)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "id"));
        if (id && *id) snprintf(j->objs[k++].id, CHECK_MAX_ID, "%s", id);
    }
    cJSON_ArrayForEach(o, list)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "id"));
        if (id && *id) {
            for (int i = 0; i < k; i++)
                if (strcmp(j->objs[i].id, id) == 0 && !j->objs[i].o) j->objs[i].o = o;
            continue;
        }
        const char *cls = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "class"));
        char cand[CHECK_MAX_ID];
        for (int m = 1;; m++) {
            snprintf(cand, sizeof cand, "%s_%d", cls ? cls : "object", m);
            if (!id_used(j->objs, k, cand)) break;
        }
        memcpy(j->objs[k].id, cand, sizeof cand);
        j->objs[k++].o = o;
    }
    j->n_objs = k;
    return 0;
}

static const cJSON *object(judge *j, const cJSON *idv)
{
    const char *id = cJSON_GetStringValue(idv);
    for (int i = 0; id && i < j->n_objs; i++)
        if (strcmp(j->objs[i].id, id) == 0 && j->objs[i].o) return j->objs[i].o;
    fail(j, "check names unknown object %s", id ? id : "(not a string)");
    return NULL;
}

typedef struct pose {
    double x, y, z, yaw;
    bool known;
} pose;

static pose report_pose(const cJSON *report)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(report, "pose");
    pose out = {0};
    const char *keys[] = {"x", "y", "z", "yaw"};
    double *dst[] = {&out.x, &out.y, &out.z, &out.yaw};
    out.known = cJSON_IsObject(p);
    for (int i = 0; i < 4 && out.known; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, keys[i]);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            out.known = false;
        else
            *dst[i] = v->valuedouble;
    }
    return out;
}

/* Distance from the pose to the object's box (0 inside it). */
static double box_distance(pose p, const cJSON *o)
{
    double w = num(o, "w", 0), d = num(o, "d", 0), h = num(o, "h", 0);
    double lo[3] = {num(o, "x", 0) - w / 2, num(o, "y", 0) - d / 2, num(o, "z", 0)};
    double hi[3] = {num(o, "x", 0) + w / 2, num(o, "y", 0) + d / 2, num(o, "z", 0) + h};
    double at[3] = {p.x, p.y, p.z}, sum = 0;
    for (int i = 0; i < 3; i++) {
        double c = fmin(fmax(at[i], lo[i]), hi[i]);
        sum += (at[i] - c) * (at[i] - c);
    }
    return sqrt(sum);
}

/* Degrees between the heading and the bearing to the object's centre
 * (bearing 0 = +y, clockwise), in [0, 180]. */
static double bearing_error(pose p, const cJSON *o)
{
    double b = atan2(num(o, "x", 0) - p.x, num(o, "y", 0) - p.y) * 180.0 / M_PI;
    return heading_diff(b, p.yaw);
}

static void check_equal(judge *j, const cJSON *want, const char *key)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(want, key);
    if (!w) return;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j->report, key);
    cJSON *null = cJSON_CreateNull();
    bool same = cJSON_Compare(r ? r : null, w, true);
    cJSON_Delete(null);
    if (same) return;
    char *rs = r ? cJSON_PrintUnformatted(r) : NULL, *ws = cJSON_PrintUnformatted(w);
    const char *err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j->report, "error"));
    if (strcmp(key, "ok") == 0)
        fail(j, "%s is %s, want %s (error: %s)", key, rs ? rs : "null", ws ? ws : "?",
             err ? err : "none");
    else
        fail(j, "%s is %s, want %s", key, rs ? rs : "null", ws ? ws : "?");
    free(rs);
    free(ws);
}

static bool need_pose(judge *j, pose p)
{
    if (!p.known) fail(j, "the report has no pose");
    return p.known;
}

static void check_near(judge *j, const cJSON *want, pose p)
{
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(want, "near"))
    {
        const cJSON *o = object(j, cJSON_GetObjectItemCaseSensitive(n, "object"));
        if (!o || !need_pose(j, p)) continue;
        double d = box_distance(p, o), max = num(n, "max_cm", -1);
        if (!(d <= max))
            fail(j, "ended %.0f cm from %s, want <= %g", d,
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(n, "object")), max);
    }
}

static void check_closer(judge *j, const cJSON *want, pose p)
{
    const cJSON *pair;
    cJSON_ArrayForEach(pair, cJSON_GetObjectItemCaseSensitive(want, "closer"))
    {
        const cJSON *oa = object(j, cJSON_GetArrayItem(pair, 0));
        const cJSON *ob = object(j, cJSON_GetArrayItem(pair, 1));
        if (!oa || !ob || !need_pose(j, p)) continue;
        if (box_distance(p, oa) >= box_distance(p, ob))
            fail(j, "ended nearer to %s than to %s",
                 cJSON_GetStringValue(cJSON_GetArrayItem(pair, 1)),
                 cJSON_GetStringValue(cJSON_GetArrayItem(pair, 0)));
    }
}

static void check_facing(judge *j, const cJSON *want, pose p)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(want, "facing"))
    {
        const cJSON *o = object(j, cJSON_GetObjectItemCaseSensitive(f, "object"));
        if (!o || !need_pose(j, p)) continue;
        double e = bearing_error(p, o), max = num(f, "max_deg", -1);
        if (!(e <= max))
            fail(j, "heading is %.0f deg off %s, want <= %g", e,
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "object")), max);
    }
}

/* The numbers in S as run_suite.py's -?\d+(?:\.\d+)? finds them: returns
 * how many, the first in *FIRST. */
static int numbers_in(const char *s, double *first)
{
    int n = 0;
    for (size_t i = 0; s[i];) {
        size_t k = i + (s[i] == '-');
        if (!isdigit((unsigned char)s[k])) {
            i++;
            continue;
        }
        while (isdigit((unsigned char)s[k]))
            k++;
        if (s[k] == '.' && isdigit((unsigned char)s[k + 1])) {
            k++;
            while (isdigit((unsigned char)s[k]))
                k++;
        }
        if (n++ == 0) *first = strtod(s + i, NULL);
        i = k;
    }
    return n;
}

static void check_answer(judge *j, const cJSON *want, const cJSON *logs)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(want, "answer");
    if (!a) return;
    int n = cJSON_GetArraySize(logs);
    const char *last = n > 0 ? cJSON_GetStringValue(cJSON_GetArrayItem(logs, n - 1)) : NULL;
    double said = 0;
    int count = last ? numbers_in(last, &said) : 0;
    if (!cJSON_IsNumber(a) || count != 1 || said != a->valuedouble)
        fail(j, "answer is '%s', want exactly the number %g", last ? last : "missing",
             cJSON_IsNumber(a) ? a->valuedouble : NAN);
}

static void check_logs(judge *j, const cJSON *want, const cJSON *logs)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(want, "logs_contain"))
    {
        const char *text = cJSON_GetStringValue(t);
        bool found = false;
        const cJSON *line;
        cJSON_ArrayForEach(line, logs)
        {
            const char *s = cJSON_GetStringValue(line);
            if (text && s && strstr(s, text)) found = true;
        }
        if (!found) fail(j, "no log line contains '%s'", text ? text : "(not a string)");
    }
}

static bool call_matches(const cJSON *k, const cJSON *c)
{
    const char *ks = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(k, "skill"));
    const char *cs = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "skill"));
    if (!ks || !cs || strcmp(ks, cs) != 0) return false;
    const char *keys[] = {"args", "ret"};
    for (int i = 0; i < 2; i++) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(c, keys[i]);
        const cJSON *got = cJSON_GetObjectItemCaseSensitive(k, keys[i]);
        if (w && (!got || !cJSON_Compare(got, w, true))) return false;
    }
    return true;
}

static const char *const MOVES[] = {"move_forward", "move_backward", "move_left", "move_right",
                                    "move_up",      "move_down",     "turn_cw",   "turn_ccw"};

static void check_calls(judge *j, const cJSON *want, const cJSON *calls)
{
    const cJSON *c, *k;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(want, "called"))
    {
        bool found = false;
        cJSON_ArrayForEach(k, calls) found = found || call_matches(k, c);
        if (!found) {
            char *s = cJSON_PrintUnformatted(c);
            fail(j, "no call matches %s", s ? s : "?");
            free(s);
        }
    }
    const cJSON *limit = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(want, "max_calls"), "moves");
    if (!limit) return;
    int moves = 0;
    cJSON_ArrayForEach(k, calls)
    {
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(k, "skill"));
        for (size_t i = 0; s && i < sizeof MOVES / sizeof *MOVES; i++)
            if (strcmp(s, MOVES[i]) == 0) moves++;
    }
    if (!cJSON_IsNumber(limit) || moves > limit->valuedouble)
        fail(j, "%d motion calls, want <= %g", moves,
             cJSON_IsNumber(limit) ? limit->valuedouble : NAN);
}

static void check_violations(judge *j, const cJSON *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j->report, "violations");
    double allowed = num(want, "violations", 0);
    int n = cJSON_GetArraySize(v);
    if (n > allowed) {
        char *s = cJSON_PrintUnformatted(v);
        fail(j, "violations: %s", s ? s : "?");
        free(s);
    }
}

int evalcheck_judge(const cJSON *report, const cJSON *scene, const cJSON *want, char *why,
                    size_t whylen)
{
    judge j = {.report = report, .why = why, .whylen = whylen};
    if (why && whylen) why[0] = '\0';
    if (!cJSON_IsObject(report) || !cJSON_IsObject(want)) {
        fail(&j, "no report or no check to judge");
        return j.fails;
    }
    if (objects_by_id(&j, scene) != 0) {
        fail(&j, "out of memory");
        return j.fails;
    }
    pose p = report_pose(report);
    const cJSON *logs = cJSON_GetObjectItemCaseSensitive(report, "logs");
    check_equal(&j, want, "ok");
    check_equal(&j, want, "result");
    check_near(&j, want, p);
    check_closer(&j, want, p);
    check_facing(&j, want, p);
    check_answer(&j, want, logs);
    check_logs(&j, want, logs);
    check_calls(&j, want, cJSON_GetObjectItemCaseSensitive(report, "calls"));
    check_violations(&j, want);
    free(j.objs);
    return j.fails;
}
