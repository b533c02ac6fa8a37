/*
 * The campaign's generators: see gen.h. The plan generator follows SPEC §4's
 * grammar and the checker's rules (a variable is visible after its
 * assignment in the same block or an inner one; literal types must match an
 * argument's declared type, a number may stand for a string), so that every
 * plan it writes is one the checker must accept.
 */
#include "gen.h"

#include "loader/loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- choices --------------------------------------------------------------- */

void camp_rng_seed(camp_rng *r, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    r->state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

void camp_rng_bytes(camp_rng *r, const uint8_t *data, size_t size)
{
    memset(r, 0, sizeof *r);
    r->data = data;
    r->size = size;
}

static uint64_t next64(camp_rng *r)
{
    /* splitmix64: tiny, fast, and the same everywhere. */
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

unsigned camp_pick(camp_rng *r, unsigned n)
{
    if (n <= 1) return 0;
    if (r->data) {
        /* One byte a choice (two for wide ones), so a mutation of a byte
         * changes one decision of the structure. */
        if (r->pos >= r->size) return 0;
        unsigned v = r->data[r->pos++];
        if (n > 256 && r->pos < r->size) v = v << 8 | r->data[r->pos++];
        return v % n;
    }
    return (unsigned)(next64(r) % n);
}

bool camp_chance(camp_rng *r, unsigned percent)
{
    if (r->data) return camp_pick(r, 100) >= 100 - percent;
    return camp_pick(r, 100) < percent;
}

/* ---- text ------------------------------------------------------------------ */

static void text_reserve(camp_text *t, size_t more)
{
    if (t->len + more + 1 <= t->cap) return;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) abort();
    t->s = s;
    t->cap = cap;
}

void camp_text_add(camp_text *t, const char *s)
{
    size_t n = strlen(s);
    text_reserve(t, n);
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

void camp_text_printf(camp_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    text_reserve(t, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void camp_text_free(camp_text *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

/* ---- the registry ---------------------------------------------------------- */

/* User skills defined in MiniSpec, using $1/$2, loops, conditions, nested
 * user skills and every kind of return. */
const char *const camp_user_skills[] = {
    "return {name='hop', description='up and down again', args={{name='cm', type='int'}},"
    " returns='bool', minispec=\"?$1>0{mu($1);md($1)}->True\"}",
    "return {name='peek', description='turn and look', args={{name='object_name', type='str'},"
    " {name='steps', type='int', optional=true}}, returns='any',"
    " minispec=\"?$2!=None{tc($2)}4{?iv($1){->ox($1)}tc(90)}->False\"}",
    "return {name='zigzag', description='left, right, forward', args={{name='cm', type='int'}},"
    " returns='bool', minispec=\"2{ml($1);mr($1)};?hop(10){->mf($1)}->False\"}",
    "return {name='ask_twice', description='probe twice', args={{name='question', type='str'}},"
    " returns='any', minispec=\"_a=p($1);_b=p($1);?_a==_b{->_a}rp\"}",
    NULL,
};

static void camp_report(void *ud, const char *path, const char *message)
{
    (void)ud;
    fprintf(stderr, "campaign: %s: %s\n", path, message);
}

skill_registry *camp_registry(void)
{
    skill_registry *reg = registry_new();
    char err[512];
    if (!reg || loader_add_builtins(reg, err, sizeof err)) {
        fprintf(stderr, "campaign: built-in skills: %s\n", err);
        registry_free(reg);
        return NULL;
    }
    for (int i = 0; camp_user_skills[i]; i++) {
        const char *src = camp_user_skills[i];
        if (loader_load_source(reg, "campaign", src, strlen(src), false, err, sizeof err)) {
            fprintf(stderr, "campaign: user skill %d: %s\n", i, err);
            registry_free(reg);
            return NULL;
        }
    }
    if (loader_finalize(reg, camp_report, NULL) != 0) {
        fprintf(stderr, "campaign: a user skill did not compile\n");
        registry_free(reg);
        return NULL;
    }
    return reg;
}

/* ---- shared vocabulary ----------------------------------------------------- */

static const char *const classes[] = {"apple",       "person", "bottle", "chair",
                                      "sports ball", "cup",    "dog",    "tv"};
#define NCLASSES (sizeof classes / sizeof classes[0])

static const char *object_name(camp_rng *r)
{
    static const char *const extra[] = {"apple_1", "person_2", "unicorn", "sports_ball", ""};
    unsigned i = camp_pick(r, NCLASSES + 5);
    return i < NCLASSES ? classes[i] : extra[i - NCLASSES];
}

static long long int_edge(camp_rng *r)
{
    static const long long edges[] = {
        0,   1,   -1,  5,    20,  30,   45,   90,         100,           180,
        359, 360, 500, 1000, -30, 5000, 9999, 2147483647, -2147483648LL, 99999999999LL};
    if (camp_chance(r, 40)) return (long long)camp_pick(r, 200);
    return edges[camp_pick(r, sizeof edges / sizeof edges[0])];
}

/* ---- MiniSpec -------------------------------------------------------------- */

#define MAX_VARS 16

typedef struct plan_gen {
    camp_rng *r;
    const skill_registry *reg;
    int max_loop;
    int dialect; /* 0 v2, 1 v1, 2 mixed */
    int budget;  /* statements left */
    bool in_def; /* a skill definition: $1, $2 usable */
    const char *vars[MAX_VARS];
    int nvars;
    camp_text *out;
} plan_gen;

static const char *const var_names[] = {"_1", "_2", "_3", "_obj", "_n", "_x9", "_a_b"};

static void add(plan_gen *g, const char *s)
{
    camp_text_add(g->out, s);
}

static bool use_v1(plan_gen *g)
{
    return g->dialect == 1 || (g->dialect == 2 && camp_chance(g->r, 50));
}

/* A skill other than replan (rp is generated on its own). */
static const skill *pick_skill(plan_gen *g)
{
    size_t n = registry_count(g->reg);
    for (int tries = 0; tries < 8; tries++) {
        const skill *s = registry_at(g->reg, camp_pick(g->r, (unsigned)n));
        if (s && s->returns != SKILL_T_NONE) return s;
    }
    return registry_find(g->reg, "log", 3);
}

static const char *skill_name(plan_gen *g, const skill *s)
{
    unsigned c = camp_pick(g->r, 4);
    if (c == 0 && s->abbr[0]) return s->abbr;
    if (c == 1 && s->alias[0]) return s->alias;
    if (c == 2 && s->alias_abbr[0]) return s->alias_abbr;
    return s->name;
}

static void gen_expr(plan_gen *g, skill_type want, int depth);

static void gen_string(plan_gen *g, bool bare_ok)
{
    unsigned c = camp_pick(g->r, 6);
    if (c == 0 && bare_ok) {
        const char *n = object_name(g->r);
        if (n[0] && !strchr(n, ' ')) {
            add(g, n);
            return;
        }
    }
    if (c == 1) {
        /* A long string (but well under any line limit). */
        add(g, "'");
        int n = 1 + (int)camp_pick(g->r, 300);
        for (int i = 0; i < n; i++)
            camp_text_add(g->out, (i % 7) ? "x" : " ");
        add(g, "'");
        return;
    }
    if (c == 2) {
        static const char *const odd[] = {"''",          "\"it's\"",        "'how many apples?'",
                                          "'is it red'", "\"caf\xc3\xa9\"", "'True'",
                                          "'12'"};
        add(g, odd[camp_pick(g->r, sizeof odd / sizeof odd[0])]);
        return;
    }
    camp_text_printf(g->out, camp_chance(g->r, 50) ? "'%s'" : "\"%s\"", object_name(g->r));
}

static void gen_number(plan_gen *g, bool is_float)
{
    if (is_float) {
        static const char *const fl[] = {"0.0", "0.5", "0.4", "0.6", "1.5", "-0.25", "99999.9"};
        add(g, fl[camp_pick(g->r, sizeof fl / sizeof fl[0])]);
    } else {
        camp_text_printf(g->out, "%lld", int_edge(g->r));
    }
}

static void gen_var_or_arg(plan_gen *g)
{
    if (g->in_def && (g->nvars == 0 || camp_chance(g->r, 50))) {
        add(g, camp_chance(g->r, 50) ? "$1" : "$2");
        return;
    }
    add(g, g->vars[camp_pick(g->r, (unsigned)g->nvars)]);
}

/* A v2 call (v1 calls only stand where their argument list ends cleanly:
 * see gen_call_v1). */
static void gen_call_v2(plan_gen *g, const skill *s, int depth)
{
    add(g, skill_name(g, s));
    int nargs = s->min_args + (int)camp_pick(g->r, (unsigned)(s->nargs - s->min_args + 1));
    if (nargs == 0) {
        /* `p` alone means take_picture; `p()` is avoided for the same reason.
         * Inside an argument list a bare name is a string (`hop(approach)`
         * passes 'approach'): a call there needs its parentheses. */
        if (strcmp(s->name, "probe") != 0 && (depth > 0 || camp_chance(g->r, 30)))
            add(g, "()");
        else if (depth > 0)
            add(g, "(\"q\")");
        return;
    }
    add(g, "(");
    for (int i = 0; i < nargs; i++) {
        if (i) add(g, camp_chance(g->r, 20) ? ", " : ",");
        gen_expr(g, s->args[i].type, depth + 1);
    }
    add(g, ")");
}

/* v1: `name,arg,arg`. Arguments are single operands (literals, variables)
 * so that the list ends where the grammar says it does. */
static void gen_call_v1(plan_gen *g, const skill *s)
{
    add(g, skill_name(g, s));
    int nargs = s->min_args + (int)camp_pick(g->r, (unsigned)(s->nargs - s->min_args + 1));
    if (nargs == 0 && strcmp(s->name, "probe") == 0) nargs = 1;
    for (int i = 0; i < nargs; i++) {
        add(g, ",");
        skill_type t = s->args[i].type;
        if ((g->nvars || g->in_def) && camp_chance(g->r, 20))
            gen_var_or_arg(g);
        else if (t == SKILL_T_INT)
            gen_number(g, false);
        else if (t == SKILL_T_FLOAT)
            gen_number(g, camp_chance(g->r, 50));
        else
            gen_string(g, true);
    }
}

static void gen_operand(plan_gen *g, skill_type want, int depth)
{
    unsigned c = camp_pick(g->r, 8);
    if (c < 2 && (g->nvars || g->in_def)) {
        gen_var_or_arg(g);
        return;
    }
    if (c == 2 && depth < 3) {
        /* A call used for its value: the checker knows what a skill
         * returns, so a number's place takes no skill returning text. */
        const skill *s = pick_skill(g);
        if (want != SKILL_T_ANY && want != SKILL_T_STR && s->returns == SKILL_T_STR)
            s = registry_find(g->reg, "is_visible", 10);
        gen_call_v2(g, s, depth);
        return;
    }
    if (c == 3 && depth < 3) {
        add(g, "(");
        gen_expr(g, want, depth + 1);
        add(g, ")");
        return;
    }
    switch (want) {
    case SKILL_T_INT: gen_number(g, false); break;
    case SKILL_T_FLOAT: gen_number(g, camp_chance(g->r, 50)); break;
    case SKILL_T_STR: camp_chance(g->r, 15) ? gen_number(g, false) : gen_string(g, false); break;
    default: {
        static const char *const lits[] = {"True", "False", "None", "0", "1.5", "'apple'", "-7"};
        add(g, lits[camp_pick(g->r, sizeof lits / sizeof lits[0])]);
    }
    }
}

static void gen_expr(plan_gen *g, skill_type want, int depth)
{
    /* Arithmetic only on numbers: the checker types literal operands, so
     * an int argument gets int operands and the rest any numbers. */
    if (want == SKILL_T_STR || depth >= 4 || !camp_chance(g->r, 25)) {
        gen_operand(g, want, depth);
        return;
    }
    skill_type num = want == SKILL_T_INT ? SKILL_T_INT : SKILL_T_FLOAT;
    gen_operand(g, num, depth + 1);
    do {
        static const char *const ops[] = {"+", "-", "*", "/"};
        /* '/' makes a float: not for an int argument. */
        add(g, ops[camp_pick(g->r, num == SKILL_T_INT ? 3 : 4)]);
        gen_operand(g, num, depth + 1);
    } while (camp_chance(g->r, 30));
}

static void gen_condition(plan_gen *g, int depth)
{
    static const char *const cmps[] = {"==", "!=", "<", ">", "<=", ">="};
    if (use_v1(g)) {
        const skill *s = pick_skill(g);
        gen_call_v1(g, s);
    } else {
        gen_operand(g, SKILL_T_ANY, depth + 1);
    }
    if (camp_chance(g->r, 70)) {
        add(g, cmps[camp_pick(g->r, 6)]);
        gen_operand(g, SKILL_T_ANY, depth + 1);
    }
    if (depth < 3 && camp_chance(g->r, 30)) {
        static const char *const joins[] = {"&", "|", "&&", "||"};
        add(g, joins[camp_pick(g->r, 4)]);
        gen_condition(g, depth + 1);
    }
}

static void gen_program(plan_gen *g, int depth);

static void gen_block(plan_gen *g, int depth)
{
    int saved = g->nvars;
    add(g, "{");
    gen_program(g, depth + 1);
    add(g, "}");
    g->nvars = saved; /* assignments in a block stay in it */
}

static void gen_statement(plan_gen *g, int depth)
{
    unsigned c = camp_pick(g->r, 12);
    g->budget--;
    if (c == 0 && depth < 3) {
        int n = camp_chance(g->r, 30)
                    ? g->max_loop
                    : 1 + (int)camp_pick(g->r, g->max_loop < 12 ? g->max_loop : 12);
        camp_text_printf(g->out, "%d", n);
        gen_block(g, depth);
    } else if (c <= 2 && depth < 4) {
        add(g, "?");
        gen_condition(g, 0);
        gen_block(g, depth);
        if (camp_chance(g->r, 25)) {
            add(g, ":");
            gen_block(g, depth);
        }
    } else if (c <= 4) {
        const char *v = var_names[camp_pick(g->r, sizeof var_names / sizeof var_names[0])];
        camp_text_printf(g->out, "%s=", v);
        if (use_v1(g))
            gen_call_v1(g, pick_skill(g));
        else
            gen_expr(g, SKILL_T_ANY, 0);
        if (g->nvars < MAX_VARS) g->vars[g->nvars++] = v;
    } else if (c == 5 && camp_chance(g->r, 40)) {
        add(g, "->");
        if (camp_chance(g->r, 15))
            add(g, camp_chance(g->r, 50) ? "rp" : "replan");
        else if (use_v1(g))
            gen_call_v1(g, pick_skill(g));
        else
            gen_expr(g, SKILL_T_ANY, 0);
    } else if (c == 6 && camp_chance(g->r, 15)) {
        static const char *const rps[] = {"rp", "replan", "re_plan"};
        add(g, rps[camp_pick(g->r, 3)]);
    } else if (use_v1(g)) {
        gen_call_v1(g, pick_skill(g));
    } else {
        gen_call_v2(g, pick_skill(g), 0);
    }
}

static void gen_program(plan_gen *g, int depth)
{
    int n = (int)camp_pick(g->r, depth ? 4 : 9);
    for (int i = 0; i < n && g->budget > 0; i++) {
        if (i) {
            /* ';' is optional except after a v1 call, whose argument list
             * would run on: always put one there (cheap, and correct). */
            add(g, camp_chance(g->r, 10) ? ";\n" : ";");
        }
        gen_statement(g, depth);
    }
}

void camp_gen_plan(camp_rng *r, const skill_registry *reg, int max_loop, camp_text *out)
{
    plan_gen g = {.r = r, .reg = reg, .max_loop = max_loop, .out = out};
    g.dialect = (int)camp_pick(r, 3);
    g.budget = 4 + (int)camp_pick(r, 40);
    if (out->s) out->s[out->len = 0] = '\0';
    add(&g, "");
    gen_program(&g, 0);
}

/* ---- Lua ------------------------------------------------------------------- */

typedef struct lua_gen {
    camp_rng *r;
    const skill_registry *reg;
    int budget;
    int fn; /* functions defined so far (names f1, f2, ...) */
    camp_text *out;
} lua_gen;

static void ladd(lua_gen *g, const char *s)
{
    camp_text_add(g->out, s);
}

/* An argument a skill may not expect. */
static void lua_odd_arg(lua_gen *g, skill_type t)
{
    static const char *const odd[] = {
        "nil",
        "0/0",
        "1/0",
        "-1/0",
        "math.huge",
        "2^63",
        "-2^63",
        "math.maxinteger",
        "math.mininteger",
        "1e308",
        "0.5",
        "-0",
        "''",
        "'x'",
        "{}",
        "true",
        "print",
        "string.rep('y', 5000)",
        "'\\0'",
        "'\\xff\\xfe'",
        "setmetatable({}, {__tostring=function() return 'apple' end})",
    };
    if (camp_chance(g->r, 55)) {
        if (t == SKILL_T_INT || t == SKILL_T_FLOAT)
            camp_text_printf(g->out, "%lld", int_edge(g->r));
        else
            camp_text_printf(g->out, "'%s'", object_name(g->r));
        return;
    }
    ladd(g, odd[camp_pick(g->r, sizeof odd / sizeof odd[0])]);
}

static void gen_lua_call(lua_gen *g)
{
    size_t n = registry_count(g->reg);
    const skill *s = registry_at(g->reg, camp_pick(g->r, (unsigned)n));
    if (!s) return;
    /* replan's return ends nothing in Lua: it only sets the flag. */
    bool protect = camp_chance(g->r, 40);
    camp_text_printf(g->out, protect ? "pcall(%s" : "%s(", s->name);
    int nargs = s->min_args + (int)camp_pick(g->r, (unsigned)(s->nargs - s->min_args + 2));
    for (int i = 0; i < nargs; i++) {
        ladd(g, i || protect ? ", " : "");
        lua_odd_arg(g, i < s->nargs ? s->args[i].type : SKILL_T_ANY);
    }
    ladd(g, ")\n");
}

static void lua_block(lua_gen *g, int depth);

static void lua_statement(lua_gen *g, int depth)
{
    g->budget--;
    unsigned c = camp_pick(g->r, 16);
    if (depth > 4) c = 15;
    switch (c) {
    case 0:
        camp_text_printf(g->out, "for i = 1, %u do\n", 1 + camp_pick(g->r, 2000));
        lua_block(g, depth);
        ladd(g, "end\n");
        break;
    case 1:
        ladd(g, "do local n = 0 while n < 50 do n = n + 1\n");
        lua_block(g, depth);
        ladd(g, "end end\n");
        break;
    case 2: {
        int f = ++g->fn;
        camp_text_printf(g->out, "local function f%d(n) if n <= 0 then return 0 end\n", f);
        lua_block(g, depth);
        camp_text_printf(g->out, "return f%d(n - 1) + 1 end\npcall(f%d, %u)\n", f, f,
                         camp_pick(g->r, 3) ? camp_pick(g->r, 100) : 250000);
        break;
    }
    case 3:
        ladd(g, "do local co = coroutine.create(function(a)\n");
        lua_block(g, depth);
        ladd(g, "coroutine.yield(a)\n");
        lua_block(g, depth);
        ladd(g, "end)\ncoroutine.resume(co, 1) coroutine.resume(co) ");
        ladd(g, camp_chance(g->r, 50) ? "coroutine.close(co) end\n" : "end\n");
        break;
    case 4:
        ladd(g, "do local w = coroutine.wrap(function() pcall(function()\n");
        lua_block(g, depth);
        ladd(g, "coroutine.yield(1)\n");
        lua_block(g, depth);
        ladd(g, "end) end)\npcall(w) pcall(w) pcall(w) end\n");
        break;
    case 5:
        ladd(g, "do local c <close> = setmetatable({}, {__close = function()\n");
        lua_block(g, depth);
        ladd(g, "end})\n");
        lua_block(g, depth);
        ladd(g, camp_chance(g->r, 30) ? "error('out')\nend\n" : "end\n");
        break;
    case 6: {
        static const char *const mm[] = {"__index", "__add",  "__eq",       "__lt", "__concat",
                                         "__len",   "__call", "__newindex", "__unm"};
        const char *m = mm[camp_pick(g->r, sizeof mm / sizeof mm[0])];
        camp_text_printf(g->out, "do local mt = {%s = function(...)\n", m);
        lua_block(g, depth);
        ladd(g, "return 1 end}\nlocal a, b = setmetatable({}, mt), setmetatable({}, mt)\n");
        ladd(g, "pcall(function() return a.x, a + 1, a == b, a < b, a .. 'x', #a, a(), -a end)\n");
        ladd(g, "pcall(function() a.y = 1 end) end\n");
        break;
    }
    case 7: {
        static const char *const lib[] = {
            "string.rep('ab', 100000)",
            "string.rep('x', 1 << 40)",
            "string.rep('x', 3000, ',')",
            "table.concat({1, 2, 3}, string.rep('-', 10000))",
            "table.unpack({}, 1, 1e7)",
            "table.unpack({1, 2, 3}, -2^31, 2^31)",
            "string.format('%99d %-99s %.99f', 1, 'x', 1/3)",
            "string.format('%q', 1/0)",
            "string.byte(string.rep('z', 1000), 1, -1)",
            "string.char(0, 255, 128)",
            "string.sub('abc', math.mininteger, math.maxinteger)",
            "string.find(string.rep('a', 50000), 'b', 1, true)",
            "utf8.char(0x10FFFF, 0)",
            "table.sort({3, 1, 2}, function(a, b) return true end)",
            "table.move({1, 2, 3}, 1, 3, math.maxinteger - 1)",
            "table.insert({}, 1, 2, 3)",
            "tostring(setmetatable({}, {__tostring = function() return {} end}))",
            "select('#', table.unpack({}, 1, 200))",
            "math.floor(0/0) // 0",
            "1 // 0",
            "math.tointeger(2^53)",
            "('x'):rep(1e9)",
        };
        camp_text_printf(g->out, "pcall(function() return %s end)\n",
                         lib[camp_pick(g->r, sizeof lib / sizeof lib[0])]);
        break;
    }
    case 8: {
        static const char *const errs[] = {"error()",
                                           "error(nil)",
                                           "error({})",
                                           "error(42)",
                                           "error(setmetatable({}, {__tostring = error}))",
                                           "error('boom', 2)",
                                           "assert(false)"};
        bool caught = camp_chance(g->r, 70);
        camp_text_printf(g->out, caught ? "pcall(function() %s end)\n" : "%s\n",
                         errs[camp_pick(g->r, sizeof errs / sizeof errs[0])]);
        break;
    }
    case 9:
        /* A budget tripper, sometimes wrapped so the script tries to go on. */
        if (camp_chance(g->r, 50))
            ladd(g, "for i = 1, 20 do pcall(function() while true do end end) end\n");
        else if (camp_chance(g->r, 50))
            ladd(g, "do local t = {} for i = 1, 1e7 do t[i] = i .. 'm' end end\n");
        else if (camp_chance(g->r, 50))
            ladd(g, "for i = 1, 1e6 do local s = string.rep('x', 1e6) end\n");
        else
            ladd(g, "do local s = 'x' for i = 1, 40 do s = s .. s end end\n");
        break;
    case 10:
        ladd(g, "do local t = setmetatable({}, {__index = function(t, k) return ");
        gen_lua_call(g);
        ladd(g, "end}) local _ = t.a end\n");
        break;
    case 11:
        ladd(g, "table.sort({5, 4, 3, 2, 1}, function(a, b)\n");
        lua_block(g, depth + 1);
        ladd(g, "return a < b end)\n");
        break;
    case 12:
        camp_text_printf(g->out, "log(string.rep('%c', %u))\nprint(1, nil, {})\n",
                         'a' + (int)camp_pick(g->r, 26),
                         camp_chance(g->r, 10) ? 70000 : camp_pick(g->r, 300));
        break;
    default: gen_lua_call(g); break;
    }
}

static void lua_block(lua_gen *g, int depth)
{
    int n = (int)camp_pick(g->r, depth ? 3 : 8);
    for (int i = 0; i < n && g->budget > 0; i++)
        lua_statement(g, depth + 1);
}

void camp_gen_lua(camp_rng *r, const skill_registry *reg, camp_text *out)
{
    lua_gen g = {.r = r, .reg = reg, .out = out};
    g.budget = 4 + (int)camp_pick(r, 30);
    if (out->s) out->s[out->len = 0] = '\0';
    ladd(&g, "");
    lua_block(&g, 0);
    if (camp_chance(r, 50)) ladd(&g, "return move_forward(30)\n");
}

/* ---- scenes ---------------------------------------------------------------- */

static double uniform(camp_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * (camp_pick(r, 10001) / 10000.0);
}

void camp_gen_scene(camp_rng *r, camp_text *out)
{
    if (out->s) out->s[out->len = 0] = '\0';
    static const double radii[] = {1, 30, 100, 250, 600, 2000};
    double radius = camp_chance(r, 50) ? radii[camp_pick(r, 6)] : uniform(r, 20, 1500);
    double min_z = camp_chance(r, 30) ? 0 : uniform(r, 0, 150);
    double max_z = min_z + (camp_chance(r, 20) ? 0 : uniform(r, 1, 400));
    double z = uniform(r, min_z, max_z);
    double x = uniform(r, -300, 300), y = uniform(r, -300, 300);
    camp_text_printf(out,
                     "{\"drone\": {\"x\": %.2f, \"y\": %.2f, \"z\": %.2f, \"yaw\": %.1f,"
                     " \"battery\": %u},\n",
                     x, y, z, uniform(r, -720, 720), 30 + camp_pick(r, 71));
    camp_text_printf(out,
                     " \"limits\": {\"geofence_radius\": %.2f, \"min_z\": %.2f, \"max_z\": %.2f,"
                     " \"max_move\": %.0f, \"battery_reserve\": %u},\n",
                     radius, min_z, max_z, camp_chance(r, 30) ? 1 : uniform(r, 1, 1000),
                     camp_pick(r, 30));
    /* Small frames mostly: take_picture encodes a PNG of the view, which
     * would cost more than the rest of a mission. */
    unsigned w = camp_chance(r, 2) ? 960 : 16 + camp_pick(r, 48);
    camp_text_printf(out, " \"camera\": {\"width\": %u, \"height\": %u, \"hfov\": %.1f},\n", w,
                     w * 3 / 4 < 16 ? 16 : w * 3 / 4, uniform(r, 1, 179));
    camp_text_printf(out, " \"noise\": {\"position_cm\": %.1f, \"miss_rate\": %.2f},\n",
                     camp_chance(r, 50) ? 0 : uniform(r, 0, 40),
                     camp_chance(r, 50) ? 0 : uniform(r, 0, 1));
    /* A windy world now and then: below half the drone's 100 cm/s even
     * with three standard deviations of gust on top (SPEC §10's bound). */
    if (camp_chance(r, 30))
        camp_text_printf(out, " \"wind\": {\"speed\": %.1f, \"heading\": %.1f, \"gust\": %.1f},\n",
                         uniform(r, 0, 35), uniform(r, 0, 360), uniform(r, 0, 4));
    camp_text_add(out, " \"objects\": [");
    int n = (int)camp_pick(r, 9);
    for (int i = 0; i < n; i++) {
        /* A scene's class has no spaces; plans name it either way. */
        const char *cls = classes[camp_pick(r, NCLASSES)];
        if (strcmp(cls, "sports ball") == 0) cls = "sports_ball";
        camp_text_printf(out,
                         "%s\n  {\"class\": \"%s\", \"x\": %.1f, \"y\": %.1f, \"z\": %.1f,"
                         " \"w\": %.1f, \"d\": %.1f, \"h\": %.1f}",
                         i ? "," : "", cls, x + uniform(r, -600, 600), y + uniform(r, -600, 600),
                         uniform(r, 0, 200), uniform(r, 1, 120), uniform(r, 1, 120),
                         uniform(r, 1, 200));
    }
    camp_text_add(out, "]}\n");
}
