/*
 * Candidate plans (`run --candidates K`): each reply of a round recorded
 * with its verdict, as one event of the mission's timeline (schema 4).
 * Rare (a few per mission), so the statement is prepared per call rather
 * than kept with the per-event ones.
 */
#include "store/store_writer.h"

#include <stdio.h>

typedef struct candidate_args {
    store_mission *m;
    double t_ms;
    const store_candidate *c;
} candidate_args;

static int candidate_job(store *s, store_job *j)
{
    const candidate_args *a = j->ud;
    const store_candidate *c = a->c;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO candidates(mission_id, seq, t_ms, llm_id, round, idx,"
                           " text, accepted, diagnostics, verify_failed, tokens, chosen)"
                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_error(s, j->what, j->err, sizeof j->err);
    sqlite3_bind_int64(st, 1, a->m->id);
    sqlite3_bind_int(st, 2, ++a->m->seq);
    sqlite3_bind_double(st, 3, a->t_ms);
    if (c->llm_id > 0) sqlite3_bind_int64(st, 4, c->llm_id);
    sqlite3_bind_int(st, 5, c->round);
    sqlite3_bind_int(st, 6, c->index);
    sqlite3_bind_text(st, 7, c->text ? c->text : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, c->accepted);
    store_bind_text(st, 9, c->diagnostics);
    if (c->verify_failed >= 0) sqlite3_bind_int(st, 10, c->verify_failed);
    if (c->tokens >= 0) sqlite3_bind_int64(st, 11, c->tokens);
    sqlite3_bind_int(st, 12, c->chosen);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_db_error(s, j->what, j->err, sizeof j->err);
    return 0;
}

int store_record_candidate(store_mission *m, double t_ms, const store_candidate *c, char *err,
                           size_t errlen)
{
    candidate_args a = {.m = m, .t_ms = t_ms < 0 ? store_mission_elapsed_ms(m) : t_ms, .c = c};
    store_job j = {.run = candidate_job, .what = "cannot record the candidate plan", .ud = &a};
    if (store_writer_run(m->s, &j)) return errmsg_set(err, errlen, "%s", j.err);
    return 0;
}
