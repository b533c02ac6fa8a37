/*
 * What one chat-completions document says, apart from the transport (SPEC
 * §8): a stream event, a whole reply body, or the body of an HTTP error.
 * Every shape read here is one that a real server sends:
 *   - content deltas, a role-only first chunk, `content: null` beside other
 *     fields (OpenAI, vLLM, llama.cpp, Ollama);
 *   - `choices: []` chunks: the usage chunk (stream_options.include_usage)
 *     and Azure OpenAI's `prompt_filter_results` chunk;
 *   - `refusal` in a delta or a message (OpenAI): the reason the model gave
 *     instead of an answer;
 *   - tool-call deltas: aloft offers no tools, so they are noted, never run;
 *   - reasoning fields (`reasoning_content`, `reasoning`): not the reply,
 *     ignored;
 *   - errors: `{"error":{"message":..}}`, `{"error":".."}` (Ollama),
 *     `{"object":"error","message":..}` (vLLM), `{"detail":..}`
 *     (FastAPI servers), and llama.cpp's stream event of type "error" whose
 *     data is `{"code":..,"message":..}`.
 */
#ifndef ALOFT_LLM_CHAT_REPLY_H
#define ALOFT_LLM_CHAT_REPLY_H

#include "textbuf.h"

#include <stdbool.h>
#include <stddef.h>

#define CHAT_SUMMARY_MAX 200 /* bytes of a server's words quoted in a message */

typedef struct chat_reply {
    char finish[32]; /* finish_reason as sent ("" until one comes) */
    bool usage_known;
    int prompt_tokens, completion_tokens, cached_tokens;
    textbuf refusal; /* the refusal text, gathered over the deltas */
    char tool[64];   /* the name of a tool the model called ("" when none) */
    bool tool_call;  /* a tool call came (named or not) */
    bool error;      /* the server reported an error */
    int error_code;  /* the code its error object gave (error.code or code); 0 if none */
    char error_msg[CHAT_SUMMARY_MAX + 8]; /* its words, summarised ("" if none) */
} chat_reply;

/* Receives reply text. Return non-zero to stop. */
typedef int (*chat_text_fn)(void *ud, const char *text, size_t len);

void chat_reply_free(chat_reply *r);

/* One stream event: TYPE from its `event:` field ("" if none), DATA its data
 * (LEN bytes, NUL-terminated). Content goes to EMIT. Returns 0, the
 * non-zero value EMIT returned, 1 when the event is an error (r->error and
 * r->error_msg are set) or -1 when DATA is not JSON. "[DONE]" is the
 * caller's to see. */
int chat_reply_event(chat_reply *r, const char *type, const char *data, size_t len,
                     chat_text_fn emit, void *ud);

/* A whole (non-streamed) reply body: the content is appended to TEXT and
 * *HAS_CONTENT says whether the message had a content string. Returns 0, 1
 * when the body is an error object (r->error set) or -1 when it is not
 * JSON. */
int chat_reply_body(chat_reply *r, const char *body, size_t len, textbuf *text, bool *has_content);

/* The choices of a whole reply asked with n > 1: the MAX with the lowest
 * `index` into OUT (their text malloc'd), in the order of index (a choice
 * without a valid one takes its place in the array as its index; a
 * repeated index is dropped). Returns how many, or -1 when BODY is not JSON or holds no
 * choices array. Declared with llm.h's llm_choice. */
struct llm_choice;
int chat_reply_choices(const char *body, size_t len, struct llm_choice *out, int max);

/* A short summary of the server's words in an error body of LEN bytes: the
 * message of a JSON error object, the title (else the text) of an HTML
 * page, else the text itself; white space collapsed, at most
 * CHAT_SUMMARY_MAX bytes (cut on a character boundary, "..." added),
 * invalid UTF-8 replaced. "" when the body says nothing. OUT holds
 * CHAT_SUMMARY_MAX + 8 bytes or more. */
void chat_error_summary(const char *body, size_t len, char *out, size_t n);

#endif
