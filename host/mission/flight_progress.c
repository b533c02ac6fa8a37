/* The progress printer: see flight_progress.h. */
#include "mission/flight_progress.h"

#include "clock.h"

static void on_begin(void *ud, int64_t mission_id, const char *store_path)
{
    flight_progress *p = ud;
    p->t0_ms = clock_now_ms();
    fprintf(p->out, "mission %lld (recorded in %s)\n", (long long)mission_id, store_path);
    fflush(p->out);
}

static void on_note(void *ud, const char *line)
{
    flight_progress *p = ud;
    fprintf(p->out, "%s\n", line);
    fflush(p->out);
}

static void on_ran(void *ud, const runner_statement *st)
{
    flight_progress *p = ud;
    /* A long statement (a loop's header with its body) shows its start. */
    fprintf(p->out, "[%7.2fs] %*s> %.*s\n", st->sim_s, 2 * st->depth, "",
            (int)(st->len > 400 ? 400 : st->len), st->text);
    fflush(p->out);
}

/* "[  1.20s] turn_cw(45) -> True", indented by call depth. High-level skills
 * are announced when they start, since they run for a while. */
static void on_skill(void *ud, struct mission_world *w, const skill_event *ev)
{
    flight_progress *p = ud;
    FILE *f = p->out;
    bool high = ev->skill->level == SKILL_HIGH;
    if (ev->kind == SKILL_EVENT_VIOLATION || (ev->kind == SKILL_EVENT_CALL && !high)) return;
    double t = w->sim ? mission_world_sim_s(w) : (clock_now_ms() - p->t0_ms) / 1000;
    fprintf(f, "[%7.2fs] %*s%s(", t, 2 * ev->depth, "", ev->skill->name);
    for (int i = 0; i < ev->nargs; i++) {
        if (i) fputs(", ", f);
        runner_print_value(f, &ev->args[i]);
    }
    if (ev->kind == SKILL_EVENT_CALL) {
        fputs(") ...\n", f);
    } else {
        fputs(") -> ", f);
        runner_print_value(f, ev->ret);
        fputc('\n', f);
    }
    fflush(f);
}

flight_sink flight_progress_sink(flight_progress *p, FILE *out)
{
    p->out = out;
    p->t0_ms = clock_now_ms();
    return (flight_sink){
        .begin = on_begin, .note = on_note, .ran = on_ran, .skill = on_skill, .ud = p};
}
