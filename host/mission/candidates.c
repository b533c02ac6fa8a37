/*
 * Candidate plans: asking for K, judging them, choosing one. See
 * candidates.h.
 */
#include "mission/candidates.h"

#include "clock.h"
#include "llm/plan_text.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One reply as it came, before it is judged. */
typedef struct reply {
    char *text;
    size_t len;
    char finish[32];
    char why[LLM_ERR_MAX]; /* the request's error when it came with one (cut, refused) */
    long tokens;
    bool estimated;
} reply;

/* A judged candidate, owning its texts. */
typedef struct judged {
    mission_candidate c;
    textbuf plan, diag;
} judged;

const char *candidates_mode_name(candidates_mode m)
{
    return m == CANDIDATES_N ? "n" : m == CANDIDATES_SEPARATE ? "separate" : "unknown";
}

void candidates_init(candidates *cs, int k)
{
    memset(cs, 0, sizeof *cs);
    cs->k = k < 1 ? 1 : k > MISSION_CANDIDATES_MAX ? MISSION_CANDIDATES_MAX : k;
    /* One at a time needs no `n`. */
    if (cs->k == 1) cs->mode = CANDIDATES_SEPARATE;
}

void candidates_free(candidates *cs)
{
    report_candidates_free(&cs->list);
}

static void say(const candidates_ops *ops, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const candidates_ops *ops, const char *fmt, ...)
{
    if (!ops->progress) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(ops->progress, fmt, ap);
    va_end(ap);
    fflush(ops->progress);
}

static long estimate_tokens(size_t len)
{
    return (long)((len + 3) / 4);
}

/* The cost of one request, into the mission's candidate totals. */
static void count_request(candidates *cs, const llm_result *r, const char *const *texts, int n)
{
    cs->requests++;
    cs->llm_ms += r->latency_ms;
    if (r->usage_known) {
        cs->prompt_tokens += r->prompt_tokens;
        cs->completion_tokens += r->completion_tokens;
        return;
    }
    cs->tokens_estimated = true;
    for (int i = 0; i < n; i++)
        cs->completion_tokens += estimate_tokens(strlen(texts[i]));
}

static void take(reply *out, const char *text, size_t len, const char *finish)
{
    memset(out, 0, sizeof *out);
    out->text = malloc(len + 1);
    if (out->text) {
        memcpy(out->text, text ? text : "", len);
        out->text[len] = '\0';
        out->len = len;
    }
    snprintf(out->finish, sizeof out->finish, "%s", finish ? finish : "");
}

/* The choices of a reply to `n` = K (or its one text), each with its share
 * of the request's completion tokens: the server counts them together, so
 * each gets a part in proportion to its length. */
static int take_choices(candidates *cs, const llm_result *r, reply *out, int max)
{
    int n = r->nchoices > 0 ? r->nchoices : 1;
    if (n > max) n = max;
    size_t total = 0;
    const char *texts[MISSION_CANDIDATES_MAX];
    for (int i = 0; i < n; i++) {
        if (r->nchoices > 0)
            take(&out[i], r->choices[i].text, r->choices[i].len, r->choices[i].finish_reason);
        else
            take(&out[i], r->text, r->len, r->finish_reason);
        if (r->nchoices > 0 && r->choices[i].refused)
            snprintf(out[i].why, sizeof out[i].why, "the model refused to answer");
        texts[i] = out[i].text ? out[i].text : "";
        total += out[i].len;
    }
    for (int i = 0; i < n; i++) {
        if (r->usage_known && n == 1) {
            out[i].tokens = r->completion_tokens;
        } else if (r->usage_known && total > 0) {
            out[i].tokens =
                (long)((double)r->completion_tokens * (double)out[i].len / (double)total + 0.5);
            out[i].estimated = true;
        } else {
            out[i].tokens = estimate_tokens(out[i].len);
            out[i].estimated = true;
        }
    }
    count_request(cs, r, texts, n);
    return n;
}

/* A request that failed in a way that still gave a candidate: cut short
 * or refused. Anything else (network, server) gave none. */
static bool failed_with_reply(const llm_result *r)
{
    return r->status == LLM_E_TRUNCATED || r->status == LLM_E_REFUSED;
}

/* Asks for the round's replies into OUT (at most cs->k). Returns how many
 * came; 0 with *FAIL holding the failed request (to free). */
static int gather(candidates *cs, const candidates_ops *ops, mission_llm_kind kind, reply *out,
                  llm_result *fail)
{
    int k = cs->k, got = 0;
    memset(fail, 0, sizeof *fail);
    if (cs->mode != CANDIDATES_SEPARATE) {
        llm_result r;
        int rc = ops->ask(ops->ud, kind, k, &r);
        if (rc == 0 || failed_with_reply(&r)) {
            got = take_choices(cs, &r, out, k);
            if (rc) snprintf(out[0].why, sizeof out[0].why, "%s", r.error);
            if (r.nchoices > 1) {
                cs->mode = CANDIDATES_N;
                if (got < k)
                    say(ops, "candidates: the server returned %d of the %d asked\n", got, k);
            } else {
                cs->mode = CANDIDATES_SEPARATE;
                say(ops,
                    "candidates: the server answered n=%d with one reply (it does not support "
                    "n): asking for the other %d one request each\n",
                    k, k - 1);
            }
            llm_result_free(&r);
        } else if (r.status == LLM_E_HTTP && (r.http_status == 400 || r.http_status == 422)) {
            cs->mode = CANDIDATES_SEPARATE;
            cs->requests++;
            say(ops,
                "candidates: the server refused n=%d (%s): asking %d times, one request each\n", k,
                r.error, k);
            llm_result_free(&r);
        } else {
            *fail = r;
            return 0;
        }
    }
    /* A server that honours `n` but returned fewer is taken at its word. */
    while (cs->mode == CANDIDATES_SEPARATE && got < k &&
           !(ops->cancelled && ops->cancelled(ops->ud))) {
        llm_result r;
        int rc = ops->ask(ops->ud, kind, 1, &r);
        if (rc && !failed_with_reply(&r)) {
            /* The replies that came stay candidates; with none the round
             * failed as its request did. */
            if (got == 0) {
                *fail = r;
                return 0;
            }
            say(ops, "candidates: a request failed, going on with %d: %s\n", got, r.error);
            llm_result_free(&r);
            break;
        }
        take_choices(cs, &r, &out[got], 1);
        if (rc) snprintf(out[got].why, sizeof out[got].why, "%s", r.error);
        got++;
        llm_result_free(&r);
    }
    return got;
}

/* Judges reply R as candidate INDEX of the round into J. */
static void judge(candidates *cs, const candidates_ops *ops, mission_llm_kind kind, int index,
                  const reply *r, judged *j)
{
    memset(j, 0, sizeof *j);
    mission_candidate *c = &j->c;
    c->round = cs->rounds;
    c->index = index;
    c->kind = kind;
    c->verify_failed = -1;
    c->tokens = r->tokens;
    c->tokens_estimated = r->estimated;
    char *plan = NULL;
    size_t len = 0;
    plan_text_status pts = plan_text_clean(r->text ? r->text : "", r->len, &plan, &len);
    if (plan) textbuf_add(&j->plan, plan, len);
    /* A reply the server cut is a prefix, whatever it looks like; one that
     * came with an error (refused, or cut on its own request) says why. */
    bool cut = strcmp(r->finish, "length") == 0 || strcmp(r->finish, "content_filter") == 0;
    if (r->why[0]) {
        textbuf_adds(&j->diag, r->why);
        textbuf_adds(&j->diag, "\n");
    } else if (cut) {
        textbuf_adds(&j->diag, "the server cut the reply short (finish_reason ");
        textbuf_adds(&j->diag, r->finish);
        textbuf_adds(&j->diag, ")\n");
    } else if (pts != PLAN_TEXT_OK) {
        textbuf_adds(&j->diag, "the reply holds no MiniSpec plan (only prose or nothing)\n");
    } else if (ops->check(ops->ud, plan, len, &j->diag)) {
        c->accepted = true;
    }
    if (c->accepted && ops->vet) {
        char why[2048] = "";
        int rc = ops->vet(ops->vet_ud, plan, len, why, sizeof why);
        if (rc != 0) {
            c->refused = true;
            textbuf_adds(&j->diag, why[0] ? why : "the plan was refused before it ran");
            textbuf_adds(&j->diag, "\n");
        }
        /* Verification that could not run says nothing of how many worlds
         * the plan fails: it ranks behind every plan that was verified. */
        c->verify_failed = rc >= 0 ? rc : INT_MAX;
    }
    free(plan);
    c->plan = textbuf_str(&j->plan);
    c->plan_len = j->plan.len;
    c->diagnostics = j->diag.len ? textbuf_str(&j->diag) : NULL;
}

/* A before B: fewer failing worlds, then fewer tokens, then the first. */
static bool better(const mission_candidate *a, const mission_candidate *b)
{
    int fa = a->verify_failed < 0 ? 0 : a->verify_failed;
    int fb = b->verify_failed < 0 ? 0 : b->verify_failed;
    if (fa != fb) return fa < fb;
    if (a->tokens != b->tokens) return a->tokens < b->tokens;
    return a->index < b->index;
}

/* The best accepted candidate of J, or -1. */
static int best(const judged *j, int n)
{
    int b = -1;
    for (int i = 0; i < n; i++)
        if (j[i].c.accepted && (b < 0 || better(&j[i].c, &j[b].c))) b = i;
    return b;
}

/* C as the report keeps it. A candidate the report has no room for (out of
 * memory) is left out of it; the round goes on. */
static void keep(candidates *cs, const mission_candidate *c)
{
    report_candidate r = {.round = c->round,
                          .index = c->index,
                          .kind = mission_llm_kind_name(c->kind),
                          .plan = (char *)c->plan,
                          .diagnostics = (char *)c->diagnostics,
                          .accepted = c->accepted,
                          .verify_failed = c->verify_failed,
                          .refused = c->refused,
                          .tokens = c->tokens,
                          .tokens_estimated = c->tokens_estimated,
                          .chosen = c->chosen};
    report_candidates_add(&cs->list, &r);
}

int candidates_round(candidates *cs, const candidates_ops *ops, mission_llm_kind kind,
                     char **chosen, size_t *len, textbuf *plan, textbuf *diag, llm_result *fail)
{
    *chosen = NULL;
    *len = 0;
    cs->rounds++;
    reply replies[MISSION_CANDIDATES_MAX];
    int n = gather(cs, ops, kind, replies, fail);
    if (n == 0) return -1;
    cs->received += n;
    double t0 = clock_now_ms();
    judged j[MISSION_CANDIDATES_MAX];
    for (int i = 0; i < n; i++)
        judge(cs, ops, kind, i, &replies[i], &j[i]);
    cs->judge_ms += clock_now_ms() - t0;
    int b = best(j, n);
    bool flies = b >= 0 && !j[b].c.refused;
    if (flies) j[b].c.chosen = true;
    int accepted = 0;
    for (int i = 0; i < n; i++) {
        accepted += j[i].c.accepted;
        if (!j[i].c.chosen) cs->unflown_tokens += j[i].c.tokens;
        if (ops->obs.candidate) ops->obs.candidate(ops->obs.ud, &j[i].c);
        keep(cs, &j[i].c);
    }
    if (flies)
        say(ops, "candidates: %d came, %d accepted; flying #%d (%ld tokens)\n", n, accepted, b,
            j[b].c.tokens);
    else
        say(ops, "candidates: %d came, %d accepted, none may fly\n", n, accepted);
    /* What asking for K costs, so far: the price of the choice. */
    say(ops,
        "candidates cost so far: %d request%s, %ld prompt + %ld completion tokens (%ld for "
        "plans not flown), %.0f ms waiting for the LLM, %.0f ms judging\n",
        cs->requests, cs->requests == 1 ? "" : "s", cs->prompt_tokens, cs->completion_tokens,
        cs->unflown_tokens, cs->llm_ms, cs->judge_ms);
    /* What a retry is told: the closest plan and why it did not fly. */
    int shown = b >= 0 ? b : 0;
    if (flies) {
        *chosen = textbuf_take(&j[b].plan);
        *len = *chosen ? strlen(*chosen) : 0;
    } else {
        textbuf_add(plan, j[shown].plan.s ? j[shown].plan.s : "", j[shown].plan.len);
        textbuf_adds(diag, j[shown].c.diagnostics ? j[shown].c.diagnostics
                                                  : "no candidate plan could be flown\n");
    }
    for (int i = 0; i < n; i++) {
        textbuf_free(&j[i].plan);
        textbuf_free(&j[i].diag);
        free(replies[i].text);
    }
    return flies ? 1 : 0;
}

void candidates_report(candidates *cs, mission_report *rep)
{
    rep->has_candidates = true;
    report_candidates_move(&rep->candidates, &cs->list);
    rep->candidates_cost = (report_candidates_cost){
        .k = cs->k,
        .mode = candidates_mode_name(cs->mode),
        .rounds = cs->rounds,
        .requests = cs->requests,
        .received = cs->received,
        .prompt_tokens = cs->prompt_tokens,
        .completion_tokens = cs->completion_tokens,
        .unflown_completion_tokens = cs->unflown_tokens,
        .tokens_estimated = cs->tokens_estimated,
        .llm_ms = cs->llm_ms,
        .judge_ms = cs->judge_ms,
    };
}
