/*
 * The skill registry: metadata of every skill, lookup and abbreviations.
 *
 * A leaf: it knows nothing of skill files, the sandbox or the MiniSpec
 * compiler (host/loader/loader.c fills it and compiles what needs compiling),
 * so every layer that reads skills can include it without a cycle.
 */
#include "skills/registry.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct skill_registry {
    skill *skills;
    size_t n, cap;
};

skill_registry *registry_new(void)
{
    return calloc(1, sizeof(skill_registry));
}

static void skill_clear(skill *s)
{
    free(s->path);
    free(s->source);
    free(s->minispec);
    free(s->lua_code);
}

void registry_free(skill_registry *reg)
{
    if (!reg) return;
    for (size_t i = 0; i < reg->n; i++)
        skill_clear(&reg->skills[i]);
    free(reg->skills);
    free(reg);
}

size_t registry_count(const skill_registry *reg)
{
    return reg->n;
}

const skill *registry_at(const skill_registry *reg, size_t i)
{
    return i < reg->n ? &reg->skills[i] : NULL;
}

skill *registry_at_mut(skill_registry *reg, size_t i)
{
    return i < reg->n ? &reg->skills[i] : NULL;
}

static bool name_is(const char *name, const char *s, size_t len)
{
    return name[0] && strncmp(name, s, len) == 0 && name[len] == '\0';
}

const skill *registry_find(const skill_registry *reg, const char *name, size_t len)
{
    for (size_t i = 0; i < reg->n; i++) {
        const skill *s = &reg->skills[i];
        if (name_is(s->name, name, len) || name_is(s->abbr, name, len) ||
            name_is(s->alias, name, len) || name_is(s->alias_abbr, name, len))
            return s;
    }
    return NULL;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

bool registry_valid_name(const char *s)
{
    if (!(islower((unsigned char)s[0]) || s[0] == '_')) return false;
    for (const char *p = s; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) return false;
    return strlen(s) < SKILL_NAME_MAX;
}

int registry_add(skill_registry *reg, const skill *s, char *err, size_t errlen)
{
    if (!registry_valid_name(s->name)) {
        snprintf(err, errlen, "skill name '%s' must be lower-case letters, digits and '_'",
                 s->name);
        return -1;
    }
    const char *names[] = {s->name, s->alias};
    for (int k = 0; k < 2; k++) {
        if (!names[k][0]) continue;
        if (registry_find(reg, names[k], strlen(names[k]))) {
            snprintf(err, errlen, "a skill named '%s' already exists", names[k]);
            return -1;
        }
    }
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 32;
        skill *grown = realloc(reg->skills, cap * sizeof *grown);
        if (!grown) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        reg->skills = grown;
        reg->cap = cap;
    }
    skill *d = &reg->skills[reg->n++];
    *d = *s;
    d->path = dup_or_null(s->path);
    d->source = dup_or_null(s->source);
    d->minispec = dup_or_null(s->minispec);
    d->lua_code = dup_or_null(s->lua_code);
    return 0;
}

const char *skill_type_name(skill_type t)
{
    switch (t) {
    case SKILL_T_NONE: return "none";
    case SKILL_T_INT: return "int";
    case SKILL_T_FLOAT: return "float";
    case SKILL_T_STR: return "str";
    case SKILL_T_BOOL: return "bool";
    case SKILL_T_ANY: return "any";
    }
    return "?";
}

int skill_type_parse(const char *s)
{
    static const struct {
        const char *name;
        skill_type t;
    } names[] = {{"int", SKILL_T_INT},    {"float", SKILL_T_FLOAT}, {"str", SKILL_T_STR},
                 {"string", SKILL_T_STR}, {"bool", SKILL_T_BOOL},   {"any", SKILL_T_ANY},
                 {"none", SKILL_T_NONE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return (int)names[i].t;
    return -1;
}

/* ---- abbreviations ---------------------------------------------------------- */

static bool abbr_taken(const skill_registry *reg, const char *a)
{
    for (size_t i = 0; i < reg->n; i++) {
        const skill *s = &reg->skills[i];
        if (!strcmp(s->abbr, a) || !strcmp(s->alias_abbr, a) || !strcmp(s->name, a) ||
            !strcmp(s->alias, a))
            return true;
    }
    return false;
}

/*
 * The first free candidate, in this order:
 *   1. the initial ("d" for delay), or the initials of the first two words
 *      ("mf" for move_forward);
 *   2. the initial followed by each later letter of the name, in order
 *      ("tu" for turn_ccw once "tc" is taken by turn_cw);
 *   3. the initial followed by any letter, then any two letters.
 * Applied in registration order (built-ins first, in SPEC §5 order), this
 * gives exactly TypeFly's abbreviations for the built-ins.
 */
static int pick_abbr(const skill_registry *reg, const char *name, char out[3])
{
    char c[3] = {name[0] == '_' ? name[1] : name[0], 0, 0};
    const char *us = strchr(name + 1, '_');
    if (us && us[1] && isalpha((unsigned char)us[1])) c[1] = us[1];
    if (!abbr_taken(reg, c)) goto found;
    for (const char *p = name + 1; *p; p++) {
        if (!isalnum((unsigned char)*p)) continue;
        c[1] = *p;
        if (!abbr_taken(reg, c)) goto found;
    }
    for (char x = 'a'; x <= 'z'; x++) {
        c[1] = x;
        if (!abbr_taken(reg, c)) goto found;
    }
    for (char x = 'a'; x <= 'z'; x++) {
        for (char y = 'a'; y <= 'z'; y++) {
            c[0] = x;
            c[1] = y;
            if (!abbr_taken(reg, c)) goto found;
        }
    }
    return -1;
found:
    memcpy(out, c, 3);
    return 0;
}

void registry_remove(skill_registry *reg, size_t i)
{
    if (i >= reg->n) return;
    skill_clear(&reg->skills[i]);
    memmove(&reg->skills[i], &reg->skills[i + 1], (reg->n - i - 1) * sizeof(skill));
    reg->n--;
}

void registry_assign_abbrs(skill_registry *reg, registry_report_fn report, void *ud)
{
    /* replan is a MiniSpec keyword with a fixed short form. */
    skill *rp = (skill *)registry_find(reg, "replan", 6);
    if (rp) memcpy(rp->abbr, "rp", 3);

    /* Requested abbreviations (abbr= in a skill file) first, if free. */
    for (size_t i = 0; i < reg->n; i++) {
        skill *s = &reg->skills[i];
        if (!s->abbr[0] || s == rp) continue;
        char want[3];
        memcpy(want, s->abbr, 3);
        s->abbr[0] = '\0';
        if (abbr_taken(reg, want) || !registry_valid_name(want)) {
            if (report) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "abbreviation '%s' is taken or invalid; assigning "
                         "another",
                         want);
                report(ud, s->path ? s->path : s->name, msg);
            }
        } else {
            memcpy(s->abbr, want, 3);
        }
    }
    for (size_t i = 0; i < reg->n; i++) {
        skill *s = &reg->skills[i];
        if (!s->abbr[0] && pick_abbr(reg, s->name, s->abbr)) {
            if (report) report(ud, s->path ? s->path : s->name, "no free abbreviation");
        }
        if (s->alias[0] && !s->alias_abbr[0]) pick_abbr(reg, s->alias, s->alias_abbr);
    }
}
