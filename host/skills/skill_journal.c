/* The skills' typed record of a mission and its JSON encoders: see skill_journal.h. */
#include "skills/skill_journal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- values ------------------------------------------------------------------ */

void skill_value_free(skill_value *v)
{
    free(v->s);
    memset(v, 0, sizeof *v);
}

int skill_value_set_str(skill_value *v, skill_value_kind kind, const char *text)
{
    memset(v, 0, sizeof *v);
    char *s = strdup(text ? text : "");
    if (!s) return -1;
    v->kind = kind;
    v->s = s;
    return 0;
}

int skill_value_copy(skill_value *to, const skill_value *from)
{
    if (from->kind == SKILL_VALUE_STR || from->kind == SKILL_VALUE_OTHER)
        return skill_value_set_str(to, from->kind, from->s);
    *to = *from;
    to->s = NULL;
    return 0;
}

static void values_free(skill_value *v, int n)
{
    for (int i = 0; i < n; i++)
        skill_value_free(&v[i]);
    free(v);
}

/* ---- the log ----------------------------------------------------------------- */

/* Room for one more item in *ITEMS (N used of *CAP, each SIZE bytes). The
 * capacity doubles, so a mission of many calls costs few reallocations. */
static int grow(void **items, int n, int *cap, size_t size)
{
    if (n < *cap) return 0;
    if (*cap > INT_MAX / 2) return -1;
    int c = *cap ? 2 * *cap : 16;
    void *p = realloc(*items, (size_t)c * size);
    if (!p) return -1;
    *items = p;
    *cap = c;
    return 0;
}

int skill_journal_add_call(skill_journal *l, const char *skill, skill_value *args, int nargs,
                           double t_ms)
{
    char *name = strdup(skill);
    if (!name || grow((void **)&l->calls, l->ncalls, &l->calls_cap, sizeof *l->calls)) {
        free(name);
        values_free(args, nargs);
        return -1;
    }
    l->calls[l->ncalls] = (skill_call){.skill = name, .args = args, .nargs = nargs, .t_ms = t_ms};
    return l->ncalls++;
}

void skill_journal_set_ret(skill_journal *l, int index, skill_value *ret)
{
    if (index < 0 || index >= l->ncalls) {
        skill_value_free(ret);
        return;
    }
    skill_value_free(&l->calls[index].ret);
    l->calls[index].ret = *ret;
    memset(ret, 0, sizeof *ret);
}

int skill_journal_add_violation(skill_journal *l, const char *skill, const char *reason,
                                const drone_pose *pose)
{
    char *s = strdup(skill), *r = strdup(reason ? reason : "");
    if (!s || !r ||
        grow((void **)&l->violations, l->nviolations, &l->violations_cap, sizeof *l->violations)) {
        free(s);
        free(r);
        return -1;
    }
    skill_violation *v = &l->violations[l->nviolations++];
    *v = (skill_violation){.skill = s, .reason = r, .has_pose = pose != NULL};
    if (pose) v->pose = *pose;
    return 0;
}

void skill_journal_free(skill_journal *l)
{
    for (int i = 0; i < l->ncalls; i++) {
        free(l->calls[i].skill);
        values_free(l->calls[i].args, l->calls[i].nargs);
        skill_value_free(&l->calls[i].ret);
    }
    free(l->calls);
    for (int i = 0; i < l->nviolations; i++) {
        free(l->violations[i].skill);
        free(l->violations[i].reason);
    }
    free(l->violations);
    memset(l, 0, sizeof *l);
}

void skill_journal_move(skill_journal *to, skill_journal *from)
{
    skill_journal_free(to);
    *to = *from;
    memset(from, 0, sizeof *from);
}

/* ---- encoders ---------------------------------------------------------------- */

cJSON *skill_value_json(const skill_value *v)
{
    switch (v->kind) {
    case SKILL_VALUE_BOOL: return cJSON_CreateBool(v->b);
    /* A double, as the JSON has no other number: cJSON writes an integral
     * value without ".0" and NaN or an infinity as null. */
    case SKILL_VALUE_INT: return cJSON_CreateNumber((double)v->i);
    case SKILL_VALUE_NUM: return cJSON_CreateNumber(v->n);
    case SKILL_VALUE_STR:
    case SKILL_VALUE_OTHER: return cJSON_CreateString(v->s ? v->s : "");
    default: return cJSON_CreateNull();
    }
}

/* Adds ITEM to ARRAY; false when ITEM is NULL (out of memory). */
static bool add(cJSON *array, cJSON *item)
{
    if (!item) return false;
    cJSON_AddItemToArray(array, item);
    return true;
}

cJSON *skill_values_json(const skill_value *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        if (!add(a, skill_value_json(&v[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

/* Adds ITEM under KEY of O; false when ITEM is NULL. */
static bool put(cJSON *o, const char *key, cJSON *item)
{
    if (!item) return false;
    cJSON_AddItemToObject(o, key, item);
    return true;
}

cJSON *skill_call_json(const skill_call *c)
{
    cJSON *o = cJSON_CreateObject();
    if (o && put(o, "skill", cJSON_CreateString(c->skill)) &&
        put(o, "args", skill_values_json(c->args, c->nargs)) &&
        put(o, "ret", skill_value_json(&c->ret)) && put(o, "t_ms", cJSON_CreateNumber(c->t_ms)))
        return o;
    cJSON_Delete(o);
    return NULL;
}

static cJSON *pose_json(const drone_pose *p)
{
    cJSON *o = cJSON_CreateObject();
    if (o && put(o, "x", cJSON_CreateNumber(p->x)) && put(o, "y", cJSON_CreateNumber(p->y)) &&
        put(o, "z", cJSON_CreateNumber(p->z)) && put(o, "yaw", cJSON_CreateNumber(p->yaw)))
        return o;
    cJSON_Delete(o);
    return NULL;
}

cJSON *skill_violation_json(const skill_violation *v)
{
    cJSON *o = cJSON_CreateObject();
    if (o && put(o, "skill", cJSON_CreateString(v->skill)) &&
        put(o, "reason", cJSON_CreateString(v->reason)) &&
        (!v->has_pose || put(o, "pose", pose_json(&v->pose))))
        return o;
    cJSON_Delete(o);
    return NULL;
}

static cJSON *call_at(const skill_journal *j, int i)
{
    return skill_call_json(&j->calls[i]);
}

static cJSON *violation_at(const skill_journal *j, int i)
{
    return skill_violation_json(&j->violations[i]);
}

/* The array of AT(J, 0..N). */
static cJSON *array_of(const skill_journal *j, int n, cJSON *(*at)(const skill_journal *, int))
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        if (!add(a, at(j, i))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

cJSON *skill_journal_calls_json(const skill_journal *j)
{
    return array_of(j, j->ncalls, call_at);
}

cJSON *skill_journal_violations_json(const skill_journal *j)
{
    return array_of(j, j->nviolations, violation_at);
}
