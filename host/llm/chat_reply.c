/*
 * Reading chat-completions documents. See chat_reply.h for the shapes.
 */
#include "llm/chat_reply.h"
#include "llm/llm.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void chat_reply_free(chat_reply *r)
{
    textbuf_free(&r->refusal);
}

static const cJSON *item(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A token count from the server: a whole number in [0, INT_MAX], else not
 * a count at all. */
static bool token_count(const cJSON *v, int *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= INT_MAX)) return false;
    *out = (int)v->valuedouble;
    return true;
}

/* Usage comes whatever the content was: in its own `choices: []` chunk, or
 * beside a null content (a refusal, a tool call). */
static void read_usage(chat_reply *r, const cJSON *root)
{
    const cJSON *u = item(root, "usage");
    if (!cJSON_IsObject(u)) return;
    bool p = token_count(item(u, "prompt_tokens"), &r->prompt_tokens);
    bool c = token_count(item(u, "completion_tokens"), &r->completion_tokens);
    /* OpenAI, vLLM and llama.cpp's server say how much of the prompt their
     * prefix cache served. */
    token_count(item(item(u, "prompt_tokens_details"), "cached_tokens"), &r->cached_tokens);
    r->usage_known = r->usage_known || p || c;
}

static void read_finish(chat_reply *r, const cJSON *choice)
{
    const cJSON *f = item(choice, "finish_reason");
    if (cJSON_IsString(f)) snprintf(r->finish, sizeof r->finish, "%s", f->valuestring);
}

/* A tool call in a delta or a message: the first name seen is kept. */
static void read_tool_calls(chat_reply *r, const cJSON *msg)
{
    const cJSON *calls = item(msg, "tool_calls");
    const cJSON *legacy = item(msg, "function_call");
    if (cJSON_IsObject(legacy)) {
        r->tool_call = true;
        const cJSON *name = item(legacy, "name");
        if (!*r->tool && cJSON_IsString(name))
            snprintf(r->tool, sizeof r->tool, "%s", name->valuestring);
    }
    if (!cJSON_IsArray(calls)) return;
    const cJSON *c;
    cJSON_ArrayForEach(c, calls)
    {
        r->tool_call = true;
        const cJSON *name = item(item(c, "function"), "name");
        if (!*r->tool && cJSON_IsString(name) && *name->valuestring)
            snprintf(r->tool, sizeof r->tool, "%s", name->valuestring);
    }
}

static void read_refusal(chat_reply *r, const cJSON *msg)
{
    const cJSON *ref = item(msg, "refusal");
    if (cJSON_IsString(ref)) textbuf_adds(&r->refusal, ref->valuestring);
}

/* ---- summaries -------------------------------------------------------------- */

/* Appends S (N bytes) to OUT with runs of white space made one space,
 * leading space dropped, stopping at CAP bytes. Returns false when cut. */
static bool add_collapsed(textbuf *out, const char *s, size_t n, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool space = isspace((unsigned char)c) || c == '\0';
        if (space && (out->len == 0 || out->s[out->len - 1] == ' ')) continue;
        if (out->len >= cap) return false;
        textbuf_add(out, space ? " " : &c, 1);
    }
    return true;
}

/* OUT gets T's text repaired to UTF-8, then cut to CHAT_SUMMARY_MAX bytes
 * on a character boundary, "..." marking a cut. */
static void finish_summary(textbuf *t, bool cut, char *out, size_t n)
{
    size_t len = 0;
    char *fixed = utf8_repair(t->len ? t->s : "", t->len, NULL, &len);
    if (!fixed) len = 0;
    while (len && fixed[len - 1] == ' ')
        len--;
    if (len > CHAT_SUMMARY_MAX) {
        len = CHAT_SUMMARY_MAX;
        cut = true;
        while (len && ((unsigned char)fixed[len] & 0xC0) == 0x80)
            len--; /* not inside a character */
    }
    snprintf(out, n, "%.*s%s", (int)len, fixed ? fixed : "", cut && len ? "..." : "");
    free(fixed);
}

static const char *find_ci(const char *s, size_t n, const char *what)
{
    size_t k = strlen(what);
    for (size_t i = 0; i + k <= n; i++)
        if (strncasecmp(s + i, what, k) == 0) return s + i;
    return NULL;
}

/* True when the N bytes at S start with WHAT, in any case. */
static bool starts_ci(const char *s, size_t n, const char *what)
{
    size_t k = strlen(what);
    return n >= k && strncasecmp(s, what, k) == 0;
}

/* The text of an HTML page: its <title>, else everything outside tags. */
static bool html_text(const char *s, size_t n, textbuf *out)
{
    const char *t = find_ci(s, n, "<title");
    const char *gt = t ? memchr(t, '>', n - (size_t)(t - s)) : NULL;
    if (gt) {
        const char *end = find_ci(gt, n - (size_t)(gt - s), "</title");
        if (end && add_collapsed(out, gt + 1, (size_t)(end - gt - 1), CHAT_SUMMARY_MAX + 1) &&
            out->len)
            return true;
        textbuf_clear(out);
    }
    bool in_tag = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<') {
            in_tag = true;
            add_collapsed(out, " ", 1, CHAT_SUMMARY_MAX); /* a tag parts words */
            /* A style sheet or a script is not words for a reader. */
            const char *close = starts_ci(s + i, n - i, "<style")    ? "</style"
                                : starts_ci(s + i, n - i, "<script") ? "</script"
                                                                     : NULL;
            const char *end = close ? find_ci(s + i, n - i, close) : NULL;
            if (close) i = end ? (size_t)(end - s) : n - 1;
        }
        if (!in_tag && !add_collapsed(out, s + i, 1, CHAT_SUMMARY_MAX)) return false;
        if (s[i] == '>') in_tag = false;
    }
    return true;
}

/* The server's words in an error object, else NULL. */
static const cJSON *error_words(const cJSON *root)
{
    const cJSON *e = item(root, "error");
    if (cJSON_IsObject(e)) e = item(e, "message");
    if (!cJSON_IsString(e)) e = item(root, "message"); /* vLLM; llama.cpp's error event */
    if (!cJSON_IsString(e)) e = item(root, "detail");  /* FastAPI */
    if (cJSON_IsArray(e)) e = item(cJSON_GetArrayItem(e, 0), "msg");
    return cJSON_IsString(e) ? e : NULL;
}

static void json_summary(const cJSON *root, char *out, size_t n)
{
    const cJSON *w = error_words(root);
    textbuf t = {0};
    bool whole =
        w ? add_collapsed(&t, w->valuestring, strlen(w->valuestring), CHAT_SUMMARY_MAX) : true;
    finish_summary(&t, !whole, out, n);
    textbuf_free(&t);
}

void chat_error_summary(const char *body, size_t len, char *out, size_t n)
{
    if (n) *out = '\0';
    if (!body || !len) return;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (cJSON_IsObject(root)) json_summary(root, out, n);
    cJSON_Delete(root);
    if (*out) return; /* else the body's own text */
    textbuf t = {0};
    bool whole = find_ci(body, len < 512 ? len : 512, "<html") ||
                         find_ci(body, len < 512 ? len : 512, "<!doctype")
                     ? html_text(body, len, &t)
                     : add_collapsed(&t, body, len, CHAT_SUMMARY_MAX);
    finish_summary(&t, !whole, out, n);
    textbuf_free(&t);
}

/* ---- documents ---------------------------------------------------------------- */

static bool is_error(const char *type, const cJSON *root)
{
    const cJSON *obj = item(root, "object");
    return strcmp(type, "error") == 0 || item(root, "error") ||
           (cJSON_IsString(obj) && strcmp(obj->valuestring, "error") == 0);
}

static void set_error(chat_reply *r, const cJSON *root)
{
    r->error = true;
    const cJSON *e = item(root, "error");
    const cJSON *code = item(cJSON_IsObject(e) ? e : root, "code");
    if (cJSON_IsNumber(code) && code->valuedouble >= 100 && code->valuedouble < 600)
        r->error_code = (int)code->valuedouble;
    json_summary(root, r->error_msg, sizeof r->error_msg);
}

/* The reply object ROOT, a stream's chunk or a whole body: its error, or
 * its usage, refusal, tool calls and finish reason, and into *CONTENT the
 * content of PART ("delta" or "message") of its first choice. Returns 1
 * for an error reply (R holds it), else 0. */
static int read_reply(chat_reply *r, const char *type, const cJSON *root, const char *part,
                      const cJSON **content)
{
    *content = NULL;
    if (is_error(type, root)) {
        set_error(r, root);
        return 1;
    }
    read_usage(r, root);
    const cJSON *choice = cJSON_GetArrayItem(item(root, "choices"), 0);
    const cJSON *msg = item(choice, part);
    read_refusal(r, msg);
    read_tool_calls(r, msg);
    read_finish(r, choice);
    *content = item(msg, "content");
    return 0;
}

int chat_reply_event(chat_reply *r, const char *type, const char *data, size_t len,
                     chat_text_fn emit, void *ud)
{
    cJSON *root = cJSON_ParseWithLength(data, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        if (!type || strcmp(type, "error") != 0) return -1;
        /* an error event in plain words */
        r->error = true;
        chat_error_summary(data, len, r->error_msg, sizeof r->error_msg);
        return 1;
    }
    const cJSON *content;
    int rc = read_reply(r, type ? type : "", root, "delta", &content);
    if (rc == 0 && cJSON_IsString(content) && *content->valuestring && emit)
        rc = emit(ud, content->valuestring, strlen(content->valuestring));
    cJSON_Delete(root);
    return rc;
}

int chat_reply_body(chat_reply *r, const char *body, size_t len, textbuf *text, bool *has_content)
{
    *has_content = false;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *content;
    int rc = read_reply(r, "", root, "message", &content);
    if (rc == 0 && cJSON_IsString(content)) {
        *has_content = true;
        textbuf_adds(text, content->valuestring);
    }
    cJSON_Delete(root);
    return rc;
}

/* The server's index of a choice: a whole number that fits, else -1. */
static int choice_index(const cJSON *choice)
{
    const cJSON *i = item(choice, "index");
    if (!cJSON_IsNumber(i) || !(i->valuedouble >= 0 && i->valuedouble <= 1e6)) return -1;
    if (i->valuedouble != (double)(int)i->valuedouble) return -1;
    return (int)i->valuedouble;
}

static bool index_taken(const struct llm_choice *out, int n, int index)
{
    for (int i = 0; i < n; i++)
        if (out[i].index == index) return true;
    return false;
}

int chat_reply_choices(const char *body, size_t len, struct llm_choice *out, int max)
{
    cJSON *root = cJSON_ParseWithLength(body, len);
    const cJSON *choices = item(root, "choices");
    if (!cJSON_IsArray(choices) || max <= 0) {
        cJSON_Delete(root);
        return -1;
    }
    /* OUT is kept in the order of index and holds the MAX lowest: a server
     * that sends more than asked, in any order, gives the same ones. */
    int n = 0, pos = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, choices)
    {
        int index = choice_index(c);
        if (index < 0) index = pos;
        pos++;
        /* Two choices claiming one index: the server contradicts itself,
         * and the first word stands. */
        if (index_taken(out, n, index)) continue;
        if (n == max && index > out[n - 1].index) continue;
        const cJSON *msg = item(c, "message");
        const cJSON *content = item(msg, "content");
        struct llm_choice o;
        memset(&o, 0, sizeof o);
        o.index = index;
        o.text = strdup(cJSON_IsString(content) ? content->valuestring : "");
        if (!o.text) break;
        o.len = strlen(o.text);
        const cJSON *f = item(c, "finish_reason");
        if (cJSON_IsString(f))
            snprintf(o.finish_reason, sizeof o.finish_reason, "%s", f->valuestring);
        o.refused = !o.len && (cJSON_IsString(item(msg, "refusal")) ||
                               cJSON_IsArray(item(msg, "tool_calls")));
        if (n == max) free(out[--n].text); /* the highest index makes room */
        int j = n++;
        for (; j > 0 && out[j - 1].index > o.index; j--)
            out[j] = out[j - 1];
        out[j] = o;
    }
    cJSON_Delete(root);
    return n;
}
