/*
 * A mission's typed events beyond the skill calls (skills/skills.h): LLM
 * exchanges, plans as they arrive and are checked, statements as they
 * start, the scene descriptions sent. The mission controller emits them to
 * an observer; the recorder (record.h) and a flight's sinks (flight.h)
 * receive them.
 */
#ifndef ALOFT_MISSION_EVENTS_H
#define ALOFT_MISSION_EVENTS_H

#include "llm/llm.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum mission_llm_kind {
    MISSION_LLM_PLAN = 0, /* first plan for the task (prompt_plan) */
    MISSION_LLM_RETRY,    /* the last plan failed the checker (prompt_retry) */
    MISSION_LLM_REPLAN,   /* rp, a failed skill or a refusal (prompt_replan) */
    MISSION_LLM_PROBE,    /* a probe asked during flight (prompt_probe) */
} mission_llm_kind;

/* "plan", "retry", "replan" or "probe". */
const char *mission_llm_kind_name(mission_llm_kind kind);

/* One candidate plan of a round of `run --candidates K` (candidates.h),
 * judged: what the checker and the verification said, and whether it is
 * the one flown. Borrowed for the call only. */
typedef struct mission_candidate {
    int round;             /* 1, 2, ...: the mission's candidate rounds */
    int index;             /* 0-based within the round */
    mission_llm_kind kind; /* the request it answered */
    const char *plan;      /* the cleaned plan ("" when the reply held none) */
    size_t plan_len;
    bool accepted;           /* whole, and the checker accepted it */
    const char *diagnostics; /* why it was not flown (checker, cut reply,
                                verification), or NULL */
    int verify_failed;       /* sampled worlds it failed; -1: not verified */
    bool refused;            /* the verification refused it (failures, or
                                verification could not run) */
    long tokens;             /* its completion tokens */
    bool tokens_estimated;   /* shared out of a request's total, or guessed */
    bool chosen;             /* the one flown */
} mission_candidate;

/* Hooks for recording a mission; any may be NULL. All run on the
 * controller's thread. */
typedef struct mission_observer {
    /* An LLM exchange ended (also when it failed or was aborted). */
    void (*llm_exchange)(void *ud, mission_llm_kind kind, const llm_message *msgs, int nmsgs,
                         const llm_result *res);
    /* Plan INDEX (0-based, in "plans") was received whole or cut short:
     * DIAGNOSTICS is NULL when the checker accepted what arrived, else the
     * "line:col: message" lines (or why there was no plan). */
    void (*plan)(void *ud, int index, const char *plan, size_t len, const char *diagnostics);
    /* LEN more bytes of plan INDEX's cleaned text arrived (as streamed, or
     * the whole plan at once without streaming), before they run. */
    void (*plan_text)(void *ud, int index, const char *text, size_t len);
    /* A statement (or block header) of plan INDEX starts running. */
    void (*statement)(void *ud, int index, const char *text, size_t len, int depth);
    /* The scene description sent to the LLM (for a plan or a probe). */
    void (*scene)(void *ud, const char *description);
    /* A candidate plan was judged (run --candidates): every one of a
     * round, after the LLM exchanges that brought them and before the
     * chosen one's plan event. */
    void (*candidate)(void *ud, const mission_candidate *c);
    void *ud;
} mission_observer;

#endif
