/*
 * The whole-plan compiler and the stream parser are one parser in two
 * modes (host/minispec/compile.c, stream.c): they agree on every example
 * plan, every malformed plan, edge cases of the grammar and thousands of
 * mutated plans. A plan is valid whole exactly when it streams without an
 * error, and the stream's error is the whole plan's first diagnostic.
 */
#include "test_minispec_util.h"

#include "check.h"

static skill_registry *reg;

static void expect_agree(const char *what, const char *plan, size_t len)
{
    char why[8192];
    CHECK(test_ms_whole_and_stream_agree(reg, plan, len, why, sizeof why), "%s: %.*s\n%s", what,
          (int)(len > 200 ? 200 : len), plan, why);
}

static void test_example_plans(const char *src)
{
    char **files;
    int n = test_ms_plan_files(src, &files);
    CHECK(n >= 25, "expected the example plans, found %d", n);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = test_ms_read_file(files[i], &len);
        ms_result r;
        minispec_compile(reg, text, len, NULL, &r);
        CHECK(r.ok, "%s: a valid plan was refused", files[i]);
        ms_result_free(&r);
        expect_agree(files[i], text, len);
        free(text);
        free(files[i]);
    }
    free(files);
}

static void test_malformed_plans(void)
{
    static const struct {
        const char *what, *plan, *diags;
    } cases[] = {
#include "test_minispec_cases.h"
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *plan = cases[i].plan;
        ms_result r;
        minispec_compile(reg, plan, strlen(plan), NULL, &r);
        CHECK(!r.ok, "%s: a malformed plan was accepted", cases[i].what);
        ms_result_free(&r);
        expect_agree(cases[i].what, plan, strlen(plan));
    }
}

/* Plans at the edges of the grammar, valid (ok) or not. */
static void test_edge_plans(void)
{
    static const struct {
        const char *plan;
        bool ok; /* the plan is valid */
    } cases[] = {
        {"", true},
        {";;;", true},
        {"  \n\t tc , 45 ; ;\n", true},
        {"tc(30)tc(30)", true},
        {"tu tu", false}, /* turn_ccw without its argument */
        {"tp;tp", true},
        {"_0=1;l(_0)", true},
        {"_01=1;l(_1)", true},
        {"_1=1;_1=_1+1;l(_1)", true},
        {"3{_1=5}l(_1)", true},
        {"?iv,cup{_1=1}?True{_2=2}", true},
        {"l('what's up')", true},
        {"l(\"it's\")", true},
        {"l('')", true},
        {"l('say \"hi\"')", true},    /* quotes escaped in Lua */
        {"l('a\tb\x01c\x7f')", true}, /* control bytes escaped in Lua */
        {"l(\"'\")", true},
        {"l('tab\\there')", true},
        {"l('caf\xc3\xa9 \xe2\x9c\x88')", true},
        {"tc(-45);tc(--5);_1=-ox(x)", true},
        {"_1=ox('a');tc((_1-0.5)*90+1-(2-3));tc(8/2)", true},
        {"_1=q('n?');?_1>2&_1!=5|_1{l(_1)}", true},
        {"?iv,person&ox,person>0.5|iv,cat{l,'found'}", true},
        {"?(iv('a')|iv('b'))&!iv('c'){l('x')}", false},
        {"?iv('a')==False{rp}", true},
        {"?iv,cup{rp};l,'say \"hi\"\\n'", true},
        {"tc,1.0;tc(45.0)", true},
        {"tc,1.5", false},
        {"o,apple;a;->True", true},
        {"o(apple)", true},
        {"l(iv)", true},
        {"l(True)", false},
        {"_1=True;_2=None;_3=1==1;->_1", true},
        {"?1<2<3{}", false},
        {"1000{tc(1)}", true},
        {"1001{tc(1)}", false},
        {"8{4{2{tc(1)}}}", true},
        {"tc(1+((((((((((((((((((((1)))))))))))))))))))))", false}, /* 21 */
        {"tc(1+((((((((((((((((1)))))))))))))))))", true},          /* 17 levels */
        {"tc(12345678901234567890123456789012345678901234567890123456789012345678901234567890"
         "12345678901234567890123)",
         true},
        {"l('a'+1)", false},
        {"_1=p('x')+1", true},
        {"->", false},
        {"-> tc(1)", true},
        {"->iv('x')&iv('y')", true},
        {"tc($1)", false},
        {"x=1", false},
        {"True", false},
        {"tc(1)}", false},
        {"{tc(1)}", false},
        {"8{tc(1)", false},
        {"tc(1);turn left now", false},
        {"rp(1)", false},
        {"l(rp)", true}, /* a bare word */
        {"l(rp())", false},
        /* TypeFly's forms (SPEC §4) */
        {"o,chair_1;p", true},
        {"p();_1=p;l(_1);p('x')", true},
        {"l,3;l(4.5);l(-2);iv(7)", true},
        {"g('apple',20);a('apple',5);a", true},
        {"tcc,90;_1=iis,x;olx,x;->Replan", true},
        {"tcc,90;_1=iis,x;l(_1)", true},
        {"r(-30);sd('x')", true},
        {"_obj=1;l(_obj)", true},
        {"_1a=1", true},
        {"_=1", false},
        {"?iv('a')&&iv('b')||True{}", true},
        {"?iv('a'){l(1)}:{l(2)}", true},
        {"->rp", true},
        {"->re_plan", true},
        {"?_1=iv('a'){}", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *plan = cases[i].plan;
        ms_result r;
        minispec_compile(reg, plan, strlen(plan), NULL, &r);
        CHECK(r.ok == cases[i].ok, "%s: %s", plan, r.ok ? "accepted" : "refused");
        ms_result_free(&r);
        expect_agree("edge plan", plan, strlen(plan));
    }
}

/* Bytes a mutation inserts: MiniSpec's own, and a few it does not have. */
static const char mutation_bytes[] = "{};,()?=<>!&|+-*/_$'\"0123456789. \nabcitlqxTFN\\:";

static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Every example plan mutated many times (bytes inserted, deleted,
 * replaced; pieces of other plans spliced in): whole and streamed agree. */
static void test_mutated_plans(const char *src)
{
    char **files;
    int n = test_ms_plan_files(src, &files);
    char **plans = calloc((size_t)n, sizeof *plans);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    for (int i = 0; i < n; i++)
        plans[i] = test_ms_read_file(files[i], &lens[i]);
    uint32_t seed = 0x9e3779b9u;
    int rounds = getenv("MS_MUTATIONS") ? atoi(getenv("MS_MUTATIONS")) : 20000;
    int valid = 0;
    char buf[4096];
    for (int r = 0; r < rounds; r++) {
        int which = (int)(next_random(&seed) % (uint32_t)n);
        size_t len = lens[which] < sizeof buf / 2 ? lens[which] : sizeof buf / 2;
        memcpy(buf, plans[which], len);
        int edits = 1 + (int)(next_random(&seed) % 3);
        for (int e = 0; e < edits; e++) {
            size_t at = len ? next_random(&seed) % (len + 1) : 0;
            char c = mutation_bytes[next_random(&seed) % (sizeof mutation_bytes - 1)];
            switch (next_random(&seed) % 4) {
            case 0: /* insert */
                if (len + 1 >= sizeof buf) break;
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = c;
                len++;
                break;
            case 1: /* delete */
                if (at < len) {
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                }
                break;
            case 2: /* replace */
                if (at < len) buf[at] = c;
                break;
            default: { /* splice a piece of another plan */
                int other = (int)(next_random(&seed) % (uint32_t)n);
                size_t from = next_random(&seed) % (lens[other] + 1);
                size_t k = next_random(&seed) % 16;
                if (from + k > lens[other]) k = lens[other] - from;
                if (len + k >= sizeof buf) break;
                memmove(buf + at + k, buf + at, len - at);
                memcpy(buf + at, plans[other] + from, k);
                len += k;
            }
            }
        }
        char why[8192];
        if (!test_ms_whole_and_stream_agree(reg, buf, len, why, sizeof why)) {
            CHECK(false, "mutant %d: %.*s\n%s", r, (int)len, buf, why);
            break;
        }
        ms_result res;
        minispec_compile(reg, buf, len, NULL, &res);
        valid += res.ok;
        ms_result_free(&res);
    }
    /* The comparison means something only if many mutants are valid (and
     * many are not). */
    CHECK(valid > rounds / 10 && valid < rounds * 9 / 10, "%d of %d mutants are valid plans", valid,
          rounds);
    printf("mutated plans: %d, valid %d\n", rounds, valid);
    for (int i = 0; i < n; i++) {
        free(plans[i]);
        free(files[i]);
    }
    free(plans);
    free(lens);
    free(files);
}

int main(void)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    reg = test_ms_registry(src);
    test_example_plans(src);
    test_malformed_plans();
    test_edge_plans();
    test_mutated_plans(src);
    registry_free(reg);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
