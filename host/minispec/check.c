/*
 * The MiniSpec checker: skills resolved against the registry (with a hint
 * for a name that is not there), argument counts and literal argument types,
 * and definite assignment of variables. Loop bounds, nesting and syntax are
 * checked where they are parsed (parser.c).
 *
 * Diagnostics are what the LLM reads before it tries again, so they name
 * the skill in full, say what was expected, and suggest the closest name.
 */
#include "editdist.h"
#include "minispec/parser.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names LLMs reach for that are not ours, with the skill they mean; most
 * come from TypeFly's 2023 skill list or plain English. */
static const struct {
    const char *wrong, *right;
} synonyms[] = {
    {"turnleft", "turn_ccw"},
    {"rotateleft", "turn_ccw"},
    {"turncounterclockwise", "turn_ccw"},
    {"turnccw", "turn_ccw"},
    {"turnright", "turn_cw"},
    {"rotateright", "turn_cw"},
    {"turnclockwise", "turn_cw"},
    {"turn", "turn_cw"},
    {"rotate", "turn_cw"},
    {"sweeping", "scan"},
    {"sweep", "scan"},
    {"find", "scan"},
    {"search", "scan"},
    {"sweepingabstract", "scan_abstract"},
    {"picture", "take_picture"},
    {"photo", "take_picture"},
    {"objectw", "object_width"},
    {"objecth", "object_height"},
    {"forward", "move_forward"},
    {"backward", "move_backward"},
    {"back", "move_backward"},
    {"left", "move_left"},
    {"right", "move_right"},
    {"up", "move_up"},
    {"down", "move_down"},
    {"wait", "delay"},
    {"sleep", "delay"},
    {"print", "log"},
    {"say", "log"},
    {"ask", "probe"},
    {"visible", "is_visible"},
    {"orient", "orienting"},
    {"align", "orienting"},
    {"go", "goto"},
};

/* Lowercase without underscores: "Turn_Left" -> "turnleft". */
static size_t normalize(const char *s, size_t n, char *out, size_t outlen)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < outlen; i++) {
        if (s[i] == '_') continue;
        out[k++] = (char)tolower((unsigned char)s[i]);
    }
    out[k] = '\0';
    return k;
}

static void format_hint(const skill *s, char *out, size_t outlen)
{
    if (s->abbr[0])
        snprintf(out, outlen, "did you mean '%s' / '%s'?", s->name, s->abbr);
    else
        snprintf(out, outlen, "did you mean '%s'?", s->name);
}

void ms_check_hint(const skill_registry *reg, const char *name, size_t len, char *out,
                   size_t outlen)
{
    out[0] = '\0';
    if (len == 0 || len > SKILL_NAME_MAX) return;
    char norm[SKILL_NAME_MAX + 1];
    normalize(name, len, norm, sizeof norm);
    for (size_t i = 0; i < sizeof synonyms / sizeof synonyms[0]; i++) {
        if (strcmp(norm, synonyms[i].wrong) != 0) continue;
        const skill *s = registry_find(reg, synonyms[i].right, strlen(synonyms[i].right));
        if (s) {
            format_hint(s, out, outlen);
            return;
        }
    }
    /* The closest full name, alias or abbreviation; ties go to the first
     * registered skill, which keeps hints stable. */
    const skill *best = NULL;
    int best_d = 1 << 30;
    size_t n = registry_count(reg);
    for (size_t i = 0; i < n; i++) {
        const skill *s = registry_at(reg, i);
        const char *names[] = {s->name, s->abbr, s->alias, s->alias_abbr};
        for (int k = 0; k < 4; k++) {
            size_t nl = strlen(names[k]);
            if (!nl) continue;
            int d = editdist(name, len, names[k], nl, true);
            if (d < best_d) {
                best_d = d;
                best = s;
            }
        }
    }
    /* one- and two-letter names are too short to guess from */
    int limit = len <= 2 ? 0 : len == 3 ? 1 : (int)len / 3;
    if (best && best_d <= limit) format_hint(best, out, outlen);
}

/* NAME (NUL-terminated) is S[0..LEN), LEN > 0. Names are short: a plain
 * loop beats a call to memcmp. */
static bool same_name(const char *name, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (name[i] != s[i]) return false;
    return name[len] == '\0';
}

static bool skill_named(const skill *s, const char *name, size_t len)
{
    return (len < 3 && same_name(s->abbr, name, len)) || same_name(s->name, name, len) ||
           (s->alias[0] &&
            (same_name(s->alias, name, len) || (len < 3 && same_name(s->alias_abbr, name, len))));
}

/* registry_find's answer (full name, abbreviation, alias, alias
 * abbreviation; first match in registry order), found with a cheap
 * first-byte test: name lookups were the largest cost of a compile. */
const skill *ms_find_skill(const skill_registry *reg, const char *name, size_t len)
{
    if (len == 0 || len >= SKILL_NAME_MAX) return NULL;
    size_t n = registry_count(reg);
    if (n == 0) return NULL;
    /* The registry keeps its skills in one array; walk it directly when
     * that holds (checked), through registry_at otherwise. */
    const skill *base = registry_at(reg, 0);
    bool array = registry_at(reg, n - 1) == base + (n - 1);
    for (size_t i = 0; i < n; i++) {
        const skill *s = array ? base + i : registry_at(reg, i);
        if (skill_named(s, name, len)) return s;
    }
    return NULL;
}

/* Name lookups go through a hash table of every name of the registry's
 * skills, built on the first lookup of a plan whose registry differs from
 * the last one. A registry may still change in place (abbreviations are
 * given out late), so a hit is checked against the skill's current names
 * and a miss falls back to the registry-order search: the table only makes
 * the common case fast, it never decides alone. */
void ms_names_sync(ms_parser *P)
{
    size_t n = P->reg ? registry_count(P->reg) : 0;
    const skill *base = n ? registry_at(P->reg, 0) : NULL;
    if (P->names.reg == P->reg && P->names.base == base && P->names.count == n) return;
    P->names.reg = P->reg;
    P->names.base = base;
    P->names.count = n;
    P->names.built = false;
}

static unsigned name_hash(const char *s, size_t len)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void names_insert(ms_parser *P, const char *key, size_t max, const skill *s)
{
    size_t len = strnlen(key, max);
    if (len == 0 || len == max) return;
    unsigned i = name_hash(key, len) & P->names.mask;
    for (;; i = (i + 1) & P->names.mask) {
        struct ms_name_slot *e = &P->names.table[i];
        if (!e->key) {
            e->key = key;
            e->s = s;
            e->len = len;
            return;
        }
        if (e->len == len && memcmp(e->key, key, len) == 0) return; /* first one wins */
    }
}

static void names_build(ms_parser *P)
{
    P->names.built = true;
    P->names.mask = 0;
    size_t n = P->names.count, want = 16;
    while (want < n * 8) /* four names a skill at most: a table under half full */
        want *= 2;
    if (want > (1u << 16)) return;
    free(P->names.table);
    P->names.table = calloc(want, sizeof *P->names.table);
    if (!P->names.table) return;
    P->names.mask = (unsigned)want - 1;
    for (size_t i = 0; i < n; i++) {
        const skill *s = registry_at(P->reg, i);
        names_insert(P, s->name, sizeof s->name, s);
        names_insert(P, s->abbr, 3, s);
        if (s->alias[0]) {
            names_insert(P, s->alias, sizeof s->alias, s);
            names_insert(P, s->alias_abbr, 3, s);
        }
    }
}

/* TypeFly's other names for skills, from its releases of November 2023
 * (turn_c_cw, is_in_sight, obj_loc_x ...), February 2024 (`->Replan`) and
 * TypeFly 2.0 (scan_description), so that plans published with them run. Looked up only when no
 * skill of the registry has the name. */
static const struct {
    const char *old, *now;
} typefly_names[] = {
    {"turn_c_cw", "turn_ccw"},
    {"tcc", "turn_ccw"},
    {"is_in_sight", "is_visible"},
    {"iis", "is_visible"},
    {"obj_loc_x", "object_x"},
    {"olx", "object_x"},
    {"obj_loc_y", "object_y"},
    {"oly", "object_y"},
    {"obj_size_w", "object_width"},
    {"osw", "object_width"},
    {"obj_size_h", "object_height"},
    {"osh", "object_height"},
    {"sweeping", "scan"},
    {"sweeping_abstract", "scan_abstract"},
    {"Replan", "replan"},
    {"sd", "scan_abstract"},
    {"scan_description", "scan_abstract"},
};

static const skill *typefly_name(ms_parser *P, const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof typefly_names / sizeof typefly_names[0]; i++)
        if (same_name(typefly_names[i].old, name, len))
            return ms_find_skill(P->reg, typefly_names[i].now, strlen(typefly_names[i].now));
    return NULL;
}

const skill *ms_lookup_skill(ms_parser *P, const char *name, size_t len)
{
    if (len == 0 || len >= SKILL_NAME_MAX) return NULL;
    if (!P->names.built) names_build(P);
    if (P->names.mask) {
        unsigned i = name_hash(name, len) & P->names.mask;
        for (;; i = (i + 1) & P->names.mask) {
            const struct ms_name_slot *e = &P->names.table[i];
            if (!e->key) break;
            if (e->len == len && skill_named(e->s, name, len)) return e->s;
        }
    }
    const skill *s = ms_find_skill(P->reg, name, len);
    return s ? s : typefly_name(P, name, len);
}

const skill *ms_check_skill(ms_parser *P, const ms_token *tok)
{
    const char *name = P->lx.src + tok->off;
    const skill *s = ms_lookup_skill(P, name, tok->len);
    if (s) {
        ms_parser_note_skill(P, s);
        return s;
    }
    char hint[SKILL_NAME_MAX * 2 + 32];
    ms_check_hint(P->reg, name, tok->len, hint, sizeof hint);
    int n = tok->len > 40 ? 40 : (int)tok->len;
    ms_parser_diag_unit(P, tok->line, tok->col, "unknown skill '%.*s'%s%s%s", n, name,
                        hint[0] ? " (" : "", hint, hint[0] ? ")" : "");
    return NULL;
}

static const char *literal_type(const ms_expr *e)
{
    switch (e->kind) {
    case MS_E_NUMBER: return e->is_int ? "int" : "float";
    case MS_E_NEG: return e->a->kind == MS_E_NUMBER ? literal_type(e->a) : NULL;
    case MS_E_STRING: return "str";
    case MS_E_TRUE:
    case MS_E_FALSE: return "bool";
    case MS_E_NONE: return "None";
    default: return NULL; /* not a literal: its type is known only when it runs */
    }
}

/* The value of a number literal (the parser keeps it only for long ones). */
static double number_value(const ms_expr *e)
{
    if (e->len > 100) return e->value;
    char digits[128];
    memcpy(digits, e->text, e->len);
    digits[e->len] = '\0';
    return strtod(digits, NULL);
}

static bool literal_fits(const ms_expr *e, skill_type want)
{
    const ms_expr *num = e->kind == MS_E_NEG ? e->a : e;
    switch (want) {
    case SKILL_T_INT:
        /* 50.0 is fine, 45.5 is not */
        if (num->kind != MS_E_NUMBER) return false;
        if (num->is_int) return true;
        double v = number_value(num);
        return v == floor(v);
    case SKILL_T_FLOAT: return num->kind == MS_E_NUMBER;
    case SKILL_T_STR: return e->kind == MS_E_STRING;
    case SKILL_T_BOOL: return e->kind == MS_E_TRUE || e->kind == MS_E_FALSE;
    default: return true;
    }
}

static void show_literal(const ms_expr *e, char *out, size_t outlen)
{
    switch (e->kind) {
    case MS_E_NUMBER: snprintf(out, outlen, "%.*s", e->len > 20 ? 20 : (int)e->len, e->text); break;
    case MS_E_NEG: {
        char inner[32];
        show_literal(e->a, inner, sizeof inner);
        snprintf(out, outlen, "-%s", inner);
        break;
    }
    case MS_E_STRING:
        snprintf(out, outlen, "'%.*s%s'", e->len > 24 ? 24 : (int)e->len, e->text,
                 e->len > 24 ? "..." : "");
        break;
    case MS_E_TRUE: snprintf(out, outlen, "True"); break;
    case MS_E_FALSE: snprintf(out, outlen, "False"); break;
    default: snprintf(out, outlen, "None"); break;
    }
}

/* Turns the number literal E (`3`, `-2.5`) into a string of its text, in
 * place; false when E is not one. */
static bool number_as_text(ms_parser *P, ms_expr *e)
{
    const ms_expr *num = e->kind == MS_E_NEG ? e->a : e;
    if (num->kind != MS_E_NUMBER || num->len > 100) return false;
    if (e != num) {
        char *text = ms_arena_alloc(&P->arena, num->len + 1);
        text[0] = '-';
        memcpy(text + 1, num->text, num->len);
        e->text = text;
        e->len = num->len + 1;
    }
    e->kind = MS_E_STRING;
    e->plain = true; /* digits, '.' and '-' */
    return true;
}

void ms_check_call(ms_parser *P, const ms_token *name, const skill *s, ms_expr **args, int nargs)
{
    if (nargs < s->min_args || nargs > s->nargs) {
        char expect[48];
        if (s->nargs == 0)
            snprintf(expect, sizeof expect, "no arguments");
        else if (s->min_args == s->nargs)
            snprintf(expect, sizeof expect, "%d argument%s", s->nargs, s->nargs == 1 ? "" : "s");
        else if (s->nargs == s->min_args + 1)
            snprintf(expect, sizeof expect, "%d or %d arguments", s->min_args, s->nargs);
        else
            snprintf(expect, sizeof expect, "%d to %d arguments", s->min_args, s->nargs);
        ms_parser_diag_unit(P, name->line, name->col, "%s takes %s, got %d", s->name, expect,
                            nargs);
    }
    for (int i = 0; i < nargs && i < s->nargs; i++) {
        /* A numeral where text is expected is its text (`l,3`): TypeFly
         * prints it (SPEC §4). */
        if (s->args[i].type == SKILL_T_STR && number_as_text(P, args[i])) continue;
        const char *got = literal_type(args[i]);
        if (!got || literal_fits(args[i], s->args[i].type)) continue;
        char shown[48];
        show_literal(args[i], shown, sizeof shown);
        ms_parser_diag_unit(P, args[i]->line, args[i]->col,
                            "%s argument %d (%s) must be %s, got %s %s", s->name, i + 1,
                            s->args[i].name, skill_type_name(s->args[i].type), got, shown);
    }
}

const skill *ms_call_skill(ms_parser *P, const char *name, size_t len, const skill *s, int nargs)
{
    if (nargs != 0 || len != 1 || name[0] != 'p' || strcmp(s->name, "probe") != 0) return s;
    const skill *tp = ms_lookup_skill(P, "take_picture", 12);
    return tp ? tp : s;
}

void ms_parser_note_skill(ms_parser *P, const skill *s)
{
    for (int i = 0; i < P->nunit_used; i++)
        if (P->unit_used[i] == s) return;
    if (P->nunit_used == P->cap_unit_used)
        P->unit_used = ms_grow(P->unit_used, &P->cap_unit_used, sizeof *P->unit_used);
    P->unit_used[P->nunit_used++] = s;
}

/* ---- variables and definite assignment ---- */

long ms_var_id(ms_parser *P, const char *text, size_t len)
{
    size_t digits = 1;
    while (digits < len && text[digits] >= '0' && text[digits] <= '9')
        digits++;
    if (digits == len) { /* _N */
        if (len > 5) return -2;
        long v = 0;
        for (size_t i = 1; i < len; i++)
            v = v * 10 + (text[i] - '0');
        return v;
    }
    if (len - 1 > MS_VAR_NAME_MAX) return -1;
    for (int i = 0; i < P->nvar_names; i++)
        if (strlen(P->var_names[i]) == len && memcmp(P->var_names[i], text, len) == 0)
            return MS_VAR_NAMED + i;
    if (P->nvar_names == P->cap_var_names)
        P->var_names = ms_grow(P->var_names, &P->cap_var_names, sizeof *P->var_names);
    memcpy(P->var_names[P->nvar_names], text, len);
    P->var_names[P->nvar_names][len] = '\0';
    return MS_VAR_NAMED + P->nvar_names++;
}

bool ms_defined(const ms_parser *P, long var)
{
    size_t byte = (size_t)var / 8;
    return byte < P->defined_bytes && (P->defined[byte] >> (var % 8) & 1);
}

void ms_define(ms_parser *P, long var)
{
    if (ms_defined(P, var)) return;
    size_t byte = (size_t)var / 8;
    if (byte >= P->defined_bytes) {
        size_t n = P->defined_bytes ? P->defined_bytes : 8;
        while (n <= byte)
            n *= 2;
        unsigned char *p = realloc(P->defined, n);
        if (!p) abort();
        memset(p + P->defined_bytes, 0, n - P->defined_bytes);
        P->defined = p;
        P->defined_bytes = n;
    }
    P->defined[byte] |= (unsigned char)(1u << (var % 8));
    if (P->ndefs_log == P->cap_defs_log) {
        P->cap_defs_log = P->cap_defs_log ? P->cap_defs_log * 2 : 16;
        P->defs_log = realloc(P->defs_log, P->cap_defs_log * sizeof *P->defs_log);
        if (!P->defs_log) abort();
    }
    P->defs_log[P->ndefs_log++] = var;
}

void ms_forget_since(ms_parser *P, size_t mark)
{
    while (P->ndefs_log > mark) {
        long var = P->defs_log[--P->ndefs_log];
        P->defined[var / 8] &= (unsigned char)~(1u << (var % 8));
    }
}
