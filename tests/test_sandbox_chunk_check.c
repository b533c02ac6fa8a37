/* The check on a chunk's text before load: at most SANDBOX_MAX_CHAIN field
 * accesses chained in one expression (Lua 5.4.4 recurses once per access,
 * with no hook, to name the value of an error: upstream 7923dbbf).
 * labels: sandbox safety */
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* "local a = setmetatable({}, {__index = function(t) return t end})\n"
 * then PREFIX a<N times SUFFIX>SUFFIX_END: a chain of N accesses that
 * evaluates (every access gives `a` back). */
static char *chain(const char *prefix, const char *step, long n, const char *end)
{
    const char *head = "local a = setmetatable({}, {__index = function(t) return t end})\n";
    size_t len = strlen(head) + strlen(prefix) + 1 + (size_t)n * strlen(step) + strlen(end) + 1;
    char *s = malloc(len);
    char *p = s + sprintf(s, "%s%sa", head, prefix);
    for (long i = 0; i < n; i++)
        p += sprintf(p, "%s", step);
    strcpy(p, end);
    return s;
}

static sandbox_status run_text(const char *code, char *err, size_t errlen)
{
    char e[256];
    sandbox *sb = sandbox_new(NULL, e, sizeof e);
    sandbox_status st = sandbox_run(sb, code, strlen(code), "@plan.lua", err, errlen);
    sandbox_free(sb);
    return st;
}

/* At the limit, one inside it and one past it, for each form of access. */
static void test_chain_limit_each_form(void)
{
    const char *steps[] = {".b", "[1]", "['k']", "[a.b]", ".b.c" /* two per step */};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        long per = i == 4 ? 2 : 1;
        /* [a.b] adds the key's own chain (1) to the outer one: 2 per step */
        if (i == 3) per = 2;
        long at = SANDBOX_MAX_CHAIN / per;
        char err[512] = "";
        for (long n = at - 1; n <= at + 1; n++) {
            char *code = chain("local x = ", steps[i], n, " + 0");
            sandbox_status st = run_text(code, err, sizeof err);
            bool over = n * per > SANDBOX_MAX_CHAIN;
            if (over) {
                CHECK(st == SANDBOX_ERROR && strstr(err, "field accesses chained"), "%s x %ld: %s",
                      steps[i], n, err);
                CHECK(strstr(err, "plan.lua:2: more than 200") != NULL, "%s", err);
            } else {
                /* inside the limit: Lua runs it (the arithmetic on a table
                 * fails with Lua's own message, not the chain check's) */
                CHECK(!strstr(err, "field accesses chained"), "%s x %ld refused: %s", steps[i], n,
                      err);
            }
            free(code);
        }
    }
}

/* The crash itself: hundreds of thousands of accesses, refused at once. */
static void test_huge_chain_refused(void)
{
    char err[512];
    char *code = chain("local x = ", ".b", 300000, ".c + 1");
    CHECK(run_text(code, err, sizeof err) == SANDBOX_ERROR);
    CHECK(strstr(err, "field accesses chained") != NULL, "%s", err);
    free(code);
}

/* What is not one chain is not counted as one. */
static void test_not_chains(void)
{
    char err[512];
    const char *ok[] = {
        /* separate expressions, concatenation, method calls */
        "local t = {b = {}} t.b.c = 1 local s = ''\n"
        "for i = 1, 150 do s = s .. 't.b.c + ' end\n",
        /* dots inside strings, long strings and comments */
        "local s = '" /* ... */
        "a.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b"
        "'\n",
        NULL,
    };
    for (const char *const *c = ok; *c; c++)
        CHECK(run_text(*c, err, sizeof err) == SANDBOX_OK, "%s: %s", *c, err);

    /* 150 short chains in one line, 150 accesses in comments and strings */
    size_t cap = 64 * 1024;
    char *code = malloc(cap);
    char *p = code + sprintf(code, "local a = {b = {c = 1}}\nlocal x = 0");
    for (int i = 0; i < 150; i++)
        p += sprintf(p, " + a.b.c");
    p += sprintf(p, "\n-- ");
    for (int i = 0; i < 150; i++)
        p += sprintf(p, "a.b.c.");
    p += sprintf(p, "\n--[==[ ");
    for (int i = 0; i < 150; i++)
        p += sprintf(p, "]] a.b.c.d ");
    p += sprintf(p, "]==]\nlocal s = [[");
    for (int i = 0; i < 150; i++)
        p += sprintf(p, ".b.c");
    sprintf(p, "]] .. \"\\\".b.b\" .. 'x.y'\nassert(x == 150)\n");
    CHECK(run_text(code, err, sizeof err) == SANDBOX_OK, "%s", err);
    free(code);
}

/* Chains hidden in parentheses, keys and calls still count. */
static void test_hidden_chains(void)
{
    char err[512];
    char *code = chain("local x = ((", ".b", 150, ")");
    size_t n = strlen(code);
    code = realloc(code, n + 150 * 2 + 64);
    char *p = code + n;
    for (int i = 0; i < 150; i++)
        p += sprintf(p, ".b");
    strcpy(p, ")\n");
    CHECK(run_text(code, err, sizeof err) == SANDBOX_ERROR && strstr(err, "chained"), "%s", err);
    free(code);
}

int main(void)
{
    test_chain_limit_each_form();
    test_huge_chain_refused();
    test_not_chains();
    test_hidden_chains();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_sandbox_chunk_check: all checks passed\n");
    return failures ? 1 : 0;
}
