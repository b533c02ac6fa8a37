/*
 * Prompts (SPEC §8): plain-text templates in prompts/, compiled into the
 * binary, optionally replaced file by file from a user directory.
 *
 *   prompts/planner.txt   system message of every planning request
 *                         ({skills} {minispec} {examples})
 *   prompts/plan.txt      first plan for a task        ({task} {scene} {memory})
 *   prompts/retry.txt     the plan failed the checker  ({plan} {diagnostics} {executed})
 *   prompts/replan.txt    the plan asked for / needs a new one ({plan} {executed} {reason})
 *   prompts/probe.txt     a question asked during flight ({question} {scene})
 *   prompts/minispec.txt  the language, inserted verbatim as {minispec}
 *   prompts/examples.txt  few-shot examples, inserted verbatim as {examples}
 *
 * A placeholder is `{name}` with a lower-case name; `{{` and `}}` stand for
 * literal braces. The two verbatim files are never scanned, so MiniSpec
 * (which is full of braces) can be written there freely. Every template is
 * checked when loaded: an unknown placeholder, or a required one that is
 * missing, is an error naming the file, line and placeholder — at start-up,
 * never in flight. The planning, retry and replan requests share one system
 * message, so servers that cache prompt prefixes reuse it.
 */
#ifndef ALOFT_LLM_PROMPT_H
#define ALOFT_LLM_PROMPT_H

#include "llm/llm.h"
#include "skills/registry.h"

#include <stddef.h>

typedef struct prompt_set prompt_set;

/* Loads and checks every template: from DIR/<file> when DIR is not NULL and
 * holds that file, else the embedded prompts/<file>. Returns NULL with a
 * message in ERR on any problem. The set is read-only afterwards and may be
 * shared between threads. */
prompt_set *prompt_load(const char *dir, char *err, size_t errlen);
void prompt_free(prompt_set *ps);

/* The files of DIR that are no template, as "a.txt, b.md" in OUT (hidden
 * files left out): a misspelt template would otherwise be ignored in silence.
 * Returns how many. */
int prompt_unknown_files(const char *dir, char *out, size_t outlen);

/* The template file names a prompt directory may hold, comma-separated. */
void prompt_file_names(char *out, size_t outlen);

/* Where template FILE ("plan.txt") was loaded from, for messages. */
const char *prompt_source(const prompt_set *ps, const char *file);

/* A rendered request: a system message (may be NULL) and a user message,
 * both malloc'd. */
typedef struct prompt_msgs {
    char *system;
    char *user;
} prompt_msgs;

void prompt_msgs_free(prompt_msgs *m);

/* Points OUT at the messages of M, ready for llm_request. Returns the count
 * (1 or 2). OUT borrows M's strings. */
int prompt_msgs_to_llm(const prompt_msgs *m, llm_message out[2]);

/* The skill list of the planning prompt, generated from REG so that user
 * skills appear automatically: one line per skill,
 *   "abbr name(arg:type, [opt:type]) -> type: description"
 * Returns a malloc'd string, or NULL if memory ran out. */
char *prompt_skill_list(const skill_registry *reg);

/* The builders. Arguments may be NULL or "" where nothing is known (the
 * template then reads "(none)" or "(nothing in view)"). SCENE is the SPEC
 * §11 scene description; MEMORY the remembered objects out of view
 * (mission/memory.h: "" or NULL when none, and the template's {memory}
 * then vanishes; optional in every planning template). Each returns 0, or
 * -1 with a message in ERR. */
int prompt_plan(const prompt_set *ps, const skill_registry *reg, const char *task,
                const char *scene, const char *memory, prompt_msgs *out, char *err, size_t errlen);

/* The plan failed the checker (before or during streaming). DIAGNOSTICS are
 * the "line:col: message" lines; EXECUTED the statements already run. */
int prompt_retry(const prompt_set *ps, const skill_registry *reg, const char *task,
                 const char *scene, const char *memory, const char *plan, const char *diagnostics,
                 const char *executed, prompt_msgs *out, char *err, size_t errlen);

/* The plan called rp, a skill failed or a constraint refused a motion;
 * REASON says which, in words. */
int prompt_replan(const prompt_set *ps, const skill_registry *reg, const char *task,
                  const char *scene, const char *memory, const char *plan, const char *executed,
                  const char *reason, prompt_msgs *out, char *err, size_t errlen);

/* A probe/query during flight: QUESTION about the latest SCENE. */
int prompt_probe(const prompt_set *ps, const char *question, const char *scene, prompt_msgs *out,
                 char *err, size_t errlen);

#endif
