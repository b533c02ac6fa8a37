/*
 * Replay (replay.h): a recorded mission's LLM replies answer again, its
 * scene and run parameters come back from the store, and the re-flight's
 * skill calls are compared with the recorded ones.
 */
#include "mission/replay.h"

#include "clock.h"

#include "llm/chat_reply.h"
#include "mission/candidates.h"
#include "mission/record.h"
#include "skills/skills.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "timeout: no reply" back into the status and the message. */
static llm_status parse_error(const char *text, const char **msg)
{
    for (int st = LLM_E_CONFIG; st <= LLM_E_REFUSED; st++) {
        const char *name = llm_status_name((llm_status)st);
        size_t n = strlen(name);
        if (strncmp(text, name, n) == 0 && text[n] == ':') {
            *msg = text[n + 1] == ' ' ? text + n + 2 : text + n + 1;
            return (llm_status)st;
        }
    }
    *msg = text;
    return LLM_E_SERVER;
}

/* A recorded reply to a request with n > 1 (record.c keeps the choices as
 * the server's body did): its choices back into OUT. A recorded single
 * reply (the server ignored n) stays one. */
static void replay_choices(const llm_request *req, llm_result *out)
{
    if (req->n <= 1 || out->len == 0 || out->text[0] != '{') return;
    llm_choice *c = calloc((size_t)req->n, sizeof *c);
    int n = c ? chat_reply_choices(out->text, out->len, c, req->n) : -1;
    if (n <= 0) {
        free(c);
        return;
    }
    out->choices = c;
    out->nchoices = n;
    char *first = strdup(c[0].text);
    if (first) {
        free(out->text);
        out->text = first;
        out->len = strlen(first);
    }
}

static int replay_complete(void *ud, mission_llm_kind kind, bool stream, const llm_request *req,
                           llm_result *out)
{
    store_replay *rp = ud;
    double t0 = clock_now_ms();
    memset(out, 0, sizeof *out);
    out->ttft_ms = -1;
    const char *text =
        store_replay_next(rp, mission_record_llm_kind(kind), out->error, sizeof out->error);
    if (!text) {
        out->status = LLM_E_PROTOCOL;
        out->text = strdup("");
        return -1;
    }
    out->text = strdup(text);
    if (!out->text) {
        out->status = LLM_E_PROTOCOL;
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    out->len = strlen(text);
    replay_choices(req, out);
    snprintf(out->finish_reason, sizeof out->finish_reason, "stop");
    out->attempts = 1;
    if (req->on_delta && out->len) {
        /* One delta with the whole reply: the controller runs statements as
         * they complete either way, so the calls come out the same. */
        out->ttft_ms = clock_now_ms() - t0;
        int stop = req->on_delta(req->ud, out->text, out->len);
        out->callback_ms = clock_now_ms() - t0 - out->ttft_ms;
        if (stop != 0) {
            out->status = LLM_E_ABORTED;
            snprintf(out->error, sizeof out->error, "the reply was cut short by the mission");
        }
    }
    (void)stream;
    const char *error = store_replay_error(rp);
    if (out->status == LLM_OK && error) {
        const char *msg;
        out->status = parse_error(error, &msg);
        snprintf(out->error, sizeof out->error, "%s", msg);
    }
    out->wall_ms = clock_now_ms() - t0;
    out->latency_ms = out->wall_ms - out->callback_ms;
    return out->status == LLM_OK ? 0 : -1;
}

mission_llm mission_replay_llm(store_replay *replay)
{
    return (mission_llm){.complete = replay_complete, .ud = replay};
}

scene *mission_replay_scene(const store_replay *r, char *err, size_t errlen)
{
    const char *text = store_replay_scene(r);
    long long id = (long long)store_replay_mission(r);
    if (!text) {
        snprintf(err, errlen, "mission %lld has no recorded scene to fly in", id);
        return NULL;
    }
    scene *sc = malloc(sizeof *sc);
    char msg[512];
    if (!sc) {
        snprintf(err, errlen, "out of memory");
    } else if (scene_parse(sc, text, strlen(text), msg, sizeof msg)) {
        snprintf(err, errlen, "mission %lld: recorded scene: %s", id, msg);
        free(sc);
        sc = NULL;
    }
    return sc;
}

bool mission_replay_in_sim(store *s, long long id, char *err, size_t errlen)
{
    cJSON *doc = store_mission_json(s, id, err, errlen);
    if (!doc) return false;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "mission");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "drone");
    bool sim = !cJSON_IsString(d) || strcmp(d->valuestring, "sim") == 0;
    if (!sim)
        snprintf(err, errlen,
                 "mission %lld was flown on %s: --replay flies simulator missions only", id,
                 d->valuestring);
    cJSON_Delete(doc);
    return sim;
}

/* A number of P's field KEY in [LO, HI], else DEF. The store is read, not
 * trusted: out-of-range values keep the defaults. */
static double number(const cJSON *p, const char *key, double lo, double hi, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
    return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi ? v->valuedouble : def;
}

void mission_replay_params(const char *text, replay_params *out)
{
    memset(out, 0, sizeof *out);
    out->stream = true;
    out->max_replans = -1;
    cJSON *p = text ? cJSON_Parse(text) : NULL;
    out->json = p;
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "stream"))) out->stream = false;
    out->max_tries = (int)number(p, "max_tries", 0, 1e8, 0);
    out->max_replans = (int)number(p, "max_replans", 0, 1e8, -1);
    out->candidates = (int)number(p, "candidates", 0, MISSION_CANDIDATES_MAX, 0);
    out->limits.max_instructions = (uint64_t)number(p, "max_instructions", 0, 1e18, 0);
    out->limits.max_memory = (size_t)number(p, "max_memory", 0, 1e18, 0);
    out->limits.timeout_ms = (uint64_t)number(p, "timeout_ms", 0, 1e18, 0);
    out->max_pictures = (int)number(p, "max_pictures", 1, 100000, 0);
    out->max_picture_bytes = (uint64_t)number(p, "max_picture_bytes", 1, 1e18 - 1, 0);
    const cJSON *dirs = cJSON_GetObjectItemCaseSensitive(p, "skills");
    for (const cJSON *d = cJSON_IsArray(dirs) ? dirs->child : NULL;
         d && out->n_skill_dirs < REPLAY_MAX_SKILL_DIRS; d = d->next)
        if (cJSON_IsString(d)) out->skill_dirs[out->n_skill_dirs++] = d->valuestring;
}

void mission_replay_params_free(replay_params *p)
{
    cJSON_Delete(p->json);
    p->json = NULL;
}

int mission_replay_same_calls(store *s, int64_t of, int64_t id, char *why, size_t whylen)
{
    /* A picture's path names the file this run wrote: it differs. */
    static const char *const any_result[] = {"take_picture", NULL};
    return store_calls_match_except(s, of, id, any_result, why, whylen);
}
