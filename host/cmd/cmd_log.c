/*
 * aloft log [--db F] [--json] [ID]: mission history from the store (SPEC §2,
 * §12). Without ID, the list of missions; with ID, the mission's timeline.
 * --json prints the documents of host/store/store_query.c unchanged; the
 * readable form is printed from those same documents.
 */
#include "cmd/cli.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft log [--db FILE] [--json] [ID | --objects]\n"
    "\n"
    "Show the recorded missions, or with ID one mission's timeline: the LLM\n"
    "exchanges, plans, statements, skill calls, refused motions and scenes.\n"
    "\n"
    "  --db FILE   mission database (default $ALOFT_DB, else\n"
    "              $XDG_DATA_HOME/aloft/aloft.db)\n"
    "  --json      print JSON: [{\"id\",\"task\",\"status\",\"started\",\"duration_ms\"}], or\n"
    "              with ID {\"mission\",\"plans\",\"events\",\"llm_calls\"}\n"
    "  --objects   the objects remembered across missions: class, position\n"
    "              estimate (cm), sightings, last seen, world (one per scene\n"
    "              file or real drone)\n"
    "  --help      show this help\n"
    "\n"
    "Exit status: 0, 1 the store could not be read or no such mission, 2 usage error.\n";

enum { OPT_OBJECTS = OPT_FIRST_FREE }; /* --db: cli.h's OPT_DB */

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* str() for printing: "-" when the field is missing. */
static const char *field(const cJSON *o, const char *key)
{
    const char *s = str(o, key);
    return s ? s : "-";
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void print_duration(double ms)
{
    if (ms < 0)
        printf("%10s", "-");
    else if (ms < 1000)
        printf("%7.1f ms", ms);
    else
        printf("%8.2f s", ms / 1000);
}

/* Prints TEXT with every line after the first indented by INDENT spaces. */
static void print_indented(const char *text, int indent)
{
    for (const char *p = text; *p; p++) {
        putchar(*p);
        if (*p == '\n' && p[1]) printf("%*s", indent, "");
    }
}

/* ---- the list -------------------------------------------------------------- */

/* The task, or for a --plan mission (no task) what it flew. */
static void print_task(store *s, const cJSON *m)
{
    const char *task = str(m, "task");
    char label[600], err[256];
    if (task)
        fputs(task, stdout);
    else if (store_plan_label(s, (int64_t)num(m, "id", 0), label, sizeof label, err, sizeof err))
        fputs("(plan given)", stdout);
    else
        printf("plan %s", label);
}

static void print_list(store *s, const cJSON *list)
{
    if (cJSON_GetArraySize(list) == 0) {
        printf("no missions recorded\n");
        return;
    }
    printf("%5s  %-24s  %-11s  %10s  %s\n", "ID", "STARTED", "STATUS", "DURATION", "TASK");
    const cJSON *m;
    cJSON_ArrayForEach(m, list)
    {
        printf("%5.0f  %-24s  %-11s  ", num(m, "id", 0), field(m, "started"), field(m, "status"));
        print_duration(num(m, "duration_ms", -1));
        printf("  ");
        print_task(s, m);
        putchar('\n');
    }
}

static void print_objects(const cJSON *list)
{
    if (cJSON_GetArraySize(list) == 0) {
        printf("no objects remembered\n");
        return;
    }
    printf("%-16s %8s %8s %8s %5s %9s  %-24s  %7s  %s\n", "CLASS", "X", "Y", "Z", "CONF",
           "SIGHTINGS", "LAST SEEN", "MISSION", "WORLD");
    const cJSON *o;
    cJSON_ArrayForEach(o, list)
    {
        printf("%-16s %8.0f %8.0f %8.0f %5.2f %9.0f  %-24s  %7.0f  %s\n", field(o, "class"),
               num(o, "x", 0), num(o, "y", 0), num(o, "z", 0), num(o, "conf", 0),
               num(o, "sightings", 0), field(o, "last_seen"), num(o, "last_mission", 0),
               field(o, "world"));
    }
}

/* ---- one mission ----------------------------------------------------------- */

/* "turn_cw(45)" from a skill and its JSON argument array. */
static void print_call(const cJSON *e)
{
    printf("%s(", field(e, "skill"));
    const cJSON *a;
    bool first = true;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(e, "args"))
    {
        char *t = cJSON_PrintUnformatted(a);
        printf("%s%s", first ? "" : ", ", t ? t : "?");
        free(t);
        first = false;
    }
    printf(")");
}

static void print_llm(const cJSON *l)
{
    printf("llm %-6s %.1f ms", field(l, "kind"), num(l, "latency_ms", 0));
    if (num(l, "ttft_ms", -1) >= 0) printf(", first token %.1f ms", num(l, "ttft_ms", 0));
    if (num(l, "prompt_tokens", -1) >= 0)
        printf(", %.0f+%.0f tokens", num(l, "prompt_tokens", 0), num(l, "completion_tokens", 0));
    if (str(l, "error")) printf(", error: %s", str(l, "error"));
    if (strcmp(field(l, "kind"), "probe") == 0) printf(" -> %s", field(l, "response"));
    putchar('\n');
}

static void print_event(const cJSON *e, const cJSON *plans)
{
    const char *kind = field(e, "kind");
    if (strcmp(kind, "call") == 0) {
        int depth = (int)num(e, "depth", 0);
        printf("%*scall ", 2 * depth, "");
        print_call(e);
        const cJSON *ret = cJSON_GetObjectItemCaseSensitive(e, "ret");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "done"))) {
            char *t = cJSON_PrintUnformatted(ret);
            printf(" -> %s", t ? t : "?");
            free(t);
        } else {
            printf(" -> (did not finish)");
        }
        const cJSON *pose = cJSON_GetObjectItemCaseSensitive(e, "pose");
        if (pose)
            printf("   at (%.0f, %.0f, %.0f) yaw %.0f", num(pose, "x", 0), num(pose, "y", 0),
                   num(pose, "z", 0), num(pose, "yaw", 0));
        putchar('\n');
    } else if (strcmp(kind, "statement") == 0) {
        printf("run  %.0f:%.0f  %s\n", num(e, "line", 0), num(e, "col", 0), field(e, "text"));
    } else if (strcmp(kind, "violation") == 0) {
        printf("REFUSED ");
        print_call(e);
        printf(": %s\n", field(e, "reason"));
    } else if (strcmp(kind, "scene") == 0) {
        printf("scene ");
        print_indented(field(e, "description"), 23);
        putchar('\n');
    } else if (strcmp(kind, "plan") == 0) {
        int no = (int)num(e, "plan", 0);
        bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "ok"));
        const cJSON *text = cJSON_GetArrayItem(plans, no - 1);
        printf("plan %d%s\n%19s", no, ok ? "" : " rejected by the checker:", "");
        if (!ok && str(e, "diagnostics")) {
            print_indented(field(e, "diagnostics"), 19);
            printf("\n%19s", "");
        }
        print_indented(cJSON_IsString(text) ? text->valuestring : "?", 19);
        putchar('\n');
    }
}

/* The candidate plans of a mission flown with --candidates, after its
 * timeline: each round's replies, which one flew and why the others did not. */
static void print_candidates(const cJSON *doc)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "candidates");
    if (!cJSON_GetArraySize(c)) return;
    printf("\n  candidate plans\n");
    for (c = c->child; c; c = c->next) {
        bool chosen = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "chosen"));
        bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "accepted"));
        printf("  round %.0f #%.0f  %s", num(c, "round", 0), num(c, "index", 0),
               chosen ? "flown"
               : ok   ? "accepted"
                      : "rejected");
        if (num(c, "tokens", -1) >= 0) printf(", %.0f tokens", num(c, "tokens", 0));
        if (num(c, "verify_failed", -1) >= 0)
            printf(", %.0f sampled worlds failed", num(c, "verify_failed", 0));
        printf("\n%19s", "");
        const char *why = str(c, "diagnostics");
        if (why) {
            /* without its last line break: the plan follows on the next */
            size_t n = strlen(why);
            while (n && why[n - 1] == '\n')
                n--;
            char *cut = strndup(why, n);
            print_indented(cut ? cut : why, 19);
            free(cut);
            printf("\n%19s", "");
        }
        print_indented(*field(c, "text") ? field(c, "text") : "(no plan)", 19);
        putchar('\n');
    }
}

static void print_mission(store *s, const cJSON *doc)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "mission");
    printf("mission %.0f: ", num(m, "id", 0));
    print_task(s, m);
    putchar('\n');
    printf("  status   %s", field(m, "status"));
    if (num(m, "duration_ms", -1) >= 0) {
        printf(" after ");
        print_duration(num(m, "duration_ms", 0));
    }
    printf("\n  started  %s\n", field(m, "started"));
    if (str(m, "drone")) printf("  drone    %s\n", str(m, "drone"));
    if (str(m, "model")) printf("  model    %s\n", str(m, "model"));
    if (num(m, "replay_of", 0) > 0) printf("  replays  mission %.0f\n", num(m, "replay_of", 0));
    if (str(m, "error")) printf("  error    %s\n", str(m, "error"));
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(m, "result");
    if (result && !cJSON_IsNull(result)) {
        char *t = cJSON_PrintUnformatted(result);
        printf("  result   %s\n", t ? t : "?");
        free(t);
    }
    putchar('\n');

    /* Events and LLM exchanges merged by time; an exchange goes before the
     * events of the same moment, since it is what led to them. */
    const cJSON *plans = cJSON_GetObjectItemCaseSensitive(doc, "plans");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "events")->child;
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(doc, "llm_calls")->child;
    while (e || l) {
        bool take_llm = l && (!e || num(l, "t_ms", 0) <= num(e, "t_ms", 0));
        const cJSON *x = take_llm ? l : e;
        printf("  %+10.1f ms  ", num(x, "t_ms", 0));
        if (take_llm) {
            print_llm(l);
            l = l->next;
        } else {
            print_event(e, plans);
            e = e->next;
        }
    }
    print_candidates(doc);
}

/* ---- the command ----------------------------------------------------------- */

static int parse_id(const char *arg, long long *id)
{
    char *end;
    errno = 0;
    *id = strtoll(arg, &end, 10);
    return errno || end == arg || *end || *id <= 0 ? -1 : 0;
}

typedef struct log_args {
    const char *db;
    bool objects;
} log_args;

static int log_option(void *ud, int opt, const char *arg)
{
    log_args *a = ud;
    if (opt == OPT_DB) a->db = arg;
    if (opt == OPT_OBJECTS) a->objects = true;
    return 0;
}

int cmd_log(int argc, char **argv)
{
    cli_common c = {.cmd = argv[0]};
    log_args a = {0};
    static const struct option opts[] = {{"db", required_argument, 0, OPT_DB},
                                         {"json", no_argument, 0, OPT_JSON},
                                         {"help", no_argument, 0, OPT_HELP},
                                         {"objects", no_argument, 0, OPT_OBJECTS},
                                         {0, 0, 0, 0}};
    int rc = cli_parse_options(&c, argc, argv, opts, usage, log_option, &a);
    if (rc >= 0) return rc;
    const char *db = a.db;
    bool objects = a.objects;
    if (argc - optind > 1) return cli_usage_error(c.cmd, "at most one mission ID");
    long long id = 0;
    if (optind < argc && parse_id(argv[optind], &id))
        return cli_usage_error(c.cmd, "'%s' is not a mission ID", argv[optind]);
    if (id && objects) return cli_usage_error(c.cmd, "--objects takes no mission ID");

    char err[1024];
    store *s = store_open(db, STORE_OPEN_EXISTING, err, sizeof err);
    if (!s) {
        /* Nothing recorded yet at the default place is an empty history;
         * a --db that does not exist is more likely a typo. */
        char path[1024];
        bool missing = strstr(err, "no mission database") != NULL;
        if (missing && !db && !id && store_resolve_path(NULL, path, sizeof path, NULL, 0) == 0) {
            if (c.json) return cli_print_json(cJSON_CreateArray());
            printf("no missions recorded (%s does not exist yet)\n", path);
            return CLI_OK;
        }
        return cli_fail(c.cmd, "%s", err);
    }
    cJSON *doc = objects ? store_objects_json(s, err, sizeof err)
                 : id    ? store_mission_json(s, id, err, sizeof err)
                         : store_list_json(s, err, sizeof err);
    if (!doc) {
        store_close(s);
        return cli_fail(c.cmd, "%s", err);
    }
    if (c.json) {
        store_close(s);
        return cli_print_json(doc);
    }
    if (objects)
        print_objects(doc);
    else if (id)
        print_mission(s, doc);
    else
        print_list(s, doc);
    store_close(s);
    cJSON_Delete(doc);
    return CLI_OK;
}
