/* aloft eval: measure an LLM planner on the benchmark suite (SPEC §2, §15).
 *
 * Every task setup is flown --repeat times by a child `aloft run --task ...
 * --json`, so each run goes through the one mission lifecycle of `aloft run`
 * and records itself in the store (--db); its report is judged by the
 * setup's check.json (host/eval/check.c) and the scores are summarised as a
 * table, the `eval --json` document and an HTML page. */
#include "cmd/cli.h"
#include "eval/flights.h"
#include "eval/report.h"
#include "eval/score.h"
#include "eval/suite.h"
#include "llm/llm.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "Usage: aloft eval [--llm-url URL] [--model M] [--repeat N] [--json] [TASK_DIR...]\n"
    "       aloft eval --compare A.json B.json\n"
    "\n"
    "Fly the benchmark suite's tasks with an LLM and score them: each task setup\n"
    "(scene and check of examples/benchmark/NN-*/) is flown --repeat times by\n"
    "`aloft run --task`, and its check judges the flight. Prints success rate,\n"
    "tries, replans, violations, first-action and total time and tokens per task\n"
    "and overall. TASK_DIR is a task directory or a suite directory (default\n"
    "examples/benchmark).\n"
    "\n" CLI_LLM_HELP "  --repeat N            flights per task setup (default 1)\n"
    "  --jobs N              flights at once (default 1; more for fast servers)\n"
    "  --seed N              simulator seed of the first repeat; repeat k uses\n"
    "                        N+k (0..1000000000, default 1)\n"
    "  --time-scale X        the simulator's clock in every flight (default 0:\n"
    "                        as fast as it can)\n"
    "  --db FILE             the store the flights are recorded in (each flight\n"
    "                        plans without the object memory of earlier ones)\n"
    "  --verify N            verify each plan in N sampled worlds before it "
    "flies\n" CLI_CANDIDATES_HELP
    "  --price-in X          price per million prompt tokens: adds the cost\n"
    "  --price-out X         price per million completion tokens\n"
    "  --json                print the scores as one JSON document\n"
    "  --html FILE           also write a page with a chart of the scores\n"
    "  --compare             show the two eval --json documents A and B side by side\n"
    "  --quiet               no progress on stderr\n"
    "\n"
    "Exit status: 0 when every run was scored (whatever the success rate), 1 when\n"
    "the LLM could not be reached or a flight gave no report, 2 usage error.\n";

/* --llm-url, --model, --seed, ... take the codes of cli.h's flight options. */
enum {
    OPT_REPEAT = OPT_FIRST_FREE,
    OPT_JOBS,
    OPT_VERIFY,
    OPT_PRICE_IN,
    OPT_PRICE_OUT,
    OPT_HTML,
    OPT_COMPARE,
    OPT_QUIET,
};

#define EVAL_MAX_REPEAT 1000
#define EVAL_MAX_JOBS 64
#define EVAL_MAX_SEED 1000000000ULL
#define EVAL_MAX_ARGS 48

/* The flight options are parsed by cli_flight_option (one set of rules and
 * messages with run and serve) and passed on to every `aloft run` as the
 * text they were given (text[OPT]). */
typedef struct eval_args {
    cli_common c;
    cli_flight_args f;
    const char *text[OPT_FIRST_FREE];
    const char *llm_url, *model, *html, *verify;
    bool compare, quiet;
    unsigned long long repeat, jobs;
    double price_in, price_out;
} eval_args;

static int count_option(const char *name, const char *arg, unsigned long long lo,
                        unsigned long long hi, unsigned long long *out)
{
    if (cli_parse_u64(arg, false, out) || *out < lo || *out > hi)
        return cli_usage_error("eval", "--%s: '%s' is not a number in %llu..%llu", name, arg, lo,
                               hi);
    return 0;
}

static int price_option(const char *name, const char *arg, double *out)
{
    char *end;
    *out = strtod(arg, &end);
    if (end == arg || *end || !isfinite(*out) || *out < 0 || *out > 1e6)
        return cli_usage_error("eval", "--%s: '%s' is not a price >= 0", name, arg);
    return 0;
}

static int on_option(void *ud, int opt, const char *arg)
{
    eval_args *a = ud;
    int r = cli_flight_option(&a->f, "eval", opt, arg);
    if (r < 0) return CLI_USAGE;
    if (r > 0) {
        /* Repeat k flies with seed N+k: N must leave room for every repeat. */
        if (opt == OPT_SEED && a->f.seed > EVAL_MAX_SEED)
            return cli_usage_error("eval", "--seed: '%s' is not a number in 0..%llu", arg,
                                   (unsigned long long)EVAL_MAX_SEED);
        a->text[opt] = arg;
        return 0;
    }
    unsigned long long verify;
    switch (opt) {
    case OPT_HTML: a->html = arg; return 0;
    case OPT_COMPARE: a->compare = true; return 0;
    case OPT_QUIET: a->quiet = true; return 0;
    case OPT_VERIFY: a->verify = arg; return count_option("verify", arg, 1, 100000000, &verify);
    case OPT_REPEAT: return count_option("repeat", arg, 1, EVAL_MAX_REPEAT, &a->repeat);
    case OPT_JOBS: return count_option("jobs", arg, 1, EVAL_MAX_JOBS, &a->jobs);
    case OPT_PRICE_IN: return price_option("price-in", arg, &a->price_in);
    case OPT_PRICE_OUT: return price_option("price-out", arg, &a->price_out);
    default: return cli_usage_error("eval", "unknown option");
    }
}

static cJSON *read_doc(const char *path)
{
    char err[512];
    size_t len;
    char *text = cli_read_input(path, CLI_MAX_INPUT, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, "aloft eval: %s\n", err);
        return NULL;
    }
    cJSON *doc = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(doc) || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "tasks"))) {
        fprintf(stderr, "aloft eval: %s: not an `aloft eval --json` document\n", path);
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

static int compare(const eval_args *a, int argc, char **argv)
{
    if (argc - optind != 2) return cli_usage_error("eval", "--compare takes A.json and B.json");
    cJSON *da = read_doc(argv[optind]), *db = da ? read_doc(argv[optind + 1]) : NULL;
    if (db && a->c.json) {
        cJSON *both = cJSON_CreateObject();
        cJSON_AddItemToObject(both, "a", da);
        cJSON_AddItemToObject(both, "b", db);
        cli_print_json(both);
        return CLI_OK;
    }
    if (db) evalreport_compare(stdout, da, argv[optind], db, argv[optind + 1]);
    cJSON_Delete(da);
    cJSON_Delete(db);
    return db ? CLI_OK : CLI_FAIL;
}

/* One planned flight: which task setup and repeat, and the argv of its
 * `aloft run` (strings owned by the plan: the numbers' text). */
typedef struct eval_plan {
    const eval_args *a;
    const evalsuite *suite;
    evalrun *runs;
    int n, done;
    bool no_llm;
} eval_plan;

static char **flight_argv(const eval_args *a, const char *exe, const evalsuite_setup *s,
                          const char *task, const char *seed, const char *pictures)
{
    char **v = calloc(EVAL_MAX_ARGS, sizeof *v);
    if (!v) return NULL;
    int k = 0;
    const char *time_scale = a->text[OPT_TIME_SCALE] ? a->text[OPT_TIME_SCALE] : "0";
    const char *fixed[] = {exe,        "run",     "--scene",    s->scene_path,  "--task",
                           task,       "--json",  "--quiet",    "--time-scale", time_scale,
                           "--seed",   seed,      "--pictures", pictures,       "--llm-url",
                           a->llm_url, "--model", a->model};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        v[k++] = (char *)fixed[i];
    const char *pairs[][2] = {{"--max-tries", a->text[OPT_MAX_TRIES]},
                              {"--max-replans", a->text[OPT_MAX_REPLANS]},
                              {"--llm-timeout-ms", a->text[OPT_LLM_TIMEOUT]},
                              {"--verify", a->verify},
                              {"--candidates", a->text[OPT_CANDIDATES]},
                              {"--db", a->text[OPT_DB]},
                              {"--prompts", a->text[OPT_PROMPTS]}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (pairs[i][1]) {
            v[k++] = (char *)pairs[i][0];
            v[k++] = (char *)pairs[i][1];
        }
    if (a->f.no_stream) v[k++] = "--no-stream";
    /* Each run plans from what it sees, not from what earlier runs of the
     * same scene saw: repeats stay independent. */
    v[k++] = "--no-memory";
    return v;
}

static bool on_flight_done(evalflight *f, int i, void *ud)
{
    eval_plan *p = ud;
    evalrun *r = &p->runs[i];
    const evalsuite_task *t = &p->suite->tasks[r->task];
    evalscore_flight(r, f->out, f->status, f->err, &t->setups[r->setup]);
    evalflight_clear(f);
    /* Ctrl-C reaches the flights too: a run it stopped is no score. */
    if (atomic_load(cli_cancel_flag())) {
        r->state = EVALRUN_NO_REPORT;
        snprintf(r->why, sizeof r->why, "cancelled");
    }
    p->done++;
    if (!p->a->quiet) {
        const char *verdict = r->state != EVALRUN_SCORED ? "NOT SCORED"
                              : r->success               ? "pass"
                                                         : "fail";
        fprintf(stderr, "eval: [%d/%d] %s [%s] #%d: %s%s%s\n", p->done, p->n, t->name,
                t->setups[r->setup].name, r->repeat + 1, verdict, r->why[0] ? ": " : "", r->why);
    }
    /* A server that cannot be reached fails every flight the same way:
     * stop instead of waiting through N more rounds of retries. */
    if (r->state == EVALRUN_NO_LLM) p->no_llm = true;
    return p->no_llm;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static int fly_all(const eval_args *a, const evalsuite *suite, evalrun *runs, int n,
                   eval_plan *plan)
{
    char exe[4096], pictures[] = "/tmp/aloft-eval-XXXXXX";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return cli_fail("eval", "cannot find the aloft program itself");
    exe[len] = '\0';
    if (!mkdtemp(pictures)) return cli_fail("eval", "cannot make a directory for pictures");
    evalflight *fl = calloc((size_t)n, sizeof *fl);
    char(*seeds)[24] = calloc((size_t)n, sizeof *seeds);
    int rc = CLI_OK;
    for (int i = 0; fl && seeds && i < n; i++) {
        const evalsuite_task *t = &suite->tasks[runs[i].task];
        snprintf(seeds[i], sizeof seeds[i], "%llu", a->f.seed + (unsigned long long)runs[i].repeat);
        fl[i].argv = flight_argv(a, exe, &t->setups[runs[i].setup], t->text, seeds[i], pictures);
        if (!fl[i].argv) rc = cli_fail("eval", "out of memory");
    }
    if (!fl || !seeds) rc = cli_fail("eval", "out of memory");
    if (rc == CLI_OK) {
        cli_cancel_begin();
        evalflights_run(fl, n, (int)a->jobs, cli_cancel_flag(), on_flight_done, plan);
        if (atomic_load(cli_cancel_flag())) rc = cli_fail("eval", "cancelled");
        cli_cancel_end();
    }
    for (int i = 0; fl && i < n; i++) {
        evalflight_clear(&fl[i]);
        free(fl[i].argv);
    }
    free(fl);
    free(seeds);
    nftw(pictures, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}

/* The runs in flight order: task by task, setup by setup, repeat by
 * repeat, so that --jobs 1 reads like the suite. */
static evalrun *plan_runs(const evalsuite *suite, int repeat, int *n)
{
    *n = 0;
    for (int k = 0; k < suite->n_tasks; k++)
        *n += suite->tasks[k].n_setups * repeat;
    evalrun *runs = calloc((size_t)(*n > 0 ? *n : 1), sizeof *runs);
    int i = 0;
    for (int k = 0; runs && k < suite->n_tasks; k++)
        for (int s = 0; s < suite->tasks[k].n_setups; s++)
            for (int r = 0; r < repeat; r++) {
                runs[i].task = k;
                runs[i].setup = s;
                runs[i].repeat = r;
                runs[i++].state = EVALRUN_NOT_FLOWN;
            }
    return runs;
}

static int report(const eval_args *a, const evalsuite *suite, const evalrun *runs, int n)
{
    evalscore_opts o = {.model = a->model,
                        .llm_url = a->llm_url,
                        .repeat = (int)a->repeat,
                        .price_in = a->price_in,
                        .price_out = a->price_out};
    if (o.price_in >= 0 || o.price_out >= 0) {
        if (o.price_in < 0) o.price_in = 0;
        if (o.price_out < 0) o.price_out = 0;
    }
    cJSON *doc = evalscore_document(suite, runs, n, &o);
    if (!doc) return cli_fail("eval", "out of memory");
    char err[512];
    int rc = CLI_OK;
    if (a->html && evalreport_html(a->html, doc, err, sizeof err) != 0)
        rc = cli_fail("eval", "%s", err);
    if (a->c.json)
        cli_print_json(doc);
    else {
        evalreport_table(stdout, doc);
        cJSON_Delete(doc);
    }
    return rc;
}

/* Exit 1 unless every run was scored; says why on stderr. */
static int verdict(const evalrun *runs, int n)
{
    int unscored = 0;
    const evalrun *first = NULL;
    bool no_llm = false;
    for (int i = 0; i < n; i++) {
        if (runs[i].state == EVALRUN_SCORED) continue;
        unscored++;
        no_llm = no_llm || runs[i].state == EVALRUN_NO_LLM;
        if (!first && runs[i].state != EVALRUN_NOT_FLOWN) first = &runs[i];
    }
    if (!unscored) return CLI_OK;
    if (no_llm)
        return cli_fail("eval", "the LLM could not be reached (%d of %d runs not scored): %s",
                        unscored, n, first ? first->why : "");
    return cli_fail("eval", "%d of %d runs not scored: %s", unscored, n, first ? first->why : "");
}

/* The suite when no TASK_DIR is given: examples/benchmark under the current
 * directory, else beside the build directory the program runs from
 * (build/aloft -> examples/benchmark), else where `make install` put it
 * (PREFIX/bin/aloft -> PREFIX/share/aloft/examples/benchmark). */
static const char *default_suite(char *buf, size_t len)
{
    struct stat st;
    if (stat("examples/benchmark", &st) == 0 && S_ISDIR(st.st_mode)) return "examples/benchmark";
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "examples/benchmark";
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    static const char *const beside[] = {"../examples/benchmark",
                                         "../share/aloft/examples/benchmark"};
    for (size_t i = 0; i < sizeof beside / sizeof *beside; i++) {
        snprintf(buf, len, "%.4000s/%s", exe, beside[i]);
        if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return buf;
    }
    return "examples/benchmark";
}

static int evaluate(eval_args *a, int argc, char **argv)
{
    char suite_dir[4200];
    char *defaults[] = {(char *)default_suite(suite_dir, sizeof suite_dir)};
    char **dirs = optind < argc ? argv + optind : defaults;
    int n_dirs = optind < argc ? argc - optind : 1;
    char err[512];
    evalsuite suite;
    if (evalsuite_load(&suite, dirs, n_dirs, err, sizeof err) != 0) {
        if (optind >= argc) return cli_usage_error("eval", "%s (give the suite's TASK_DIR)", err);
        return cli_fail("eval", "%s", err);
    }
    int n;
    evalrun *runs = plan_runs(&suite, (int)a->repeat, &n);
    eval_plan plan = {.a = a, .suite = &suite, .runs = runs, .n = n};
    int rc = runs ? fly_all(a, &suite, runs, n, &plan) : cli_fail("eval", "out of memory");
    if (rc == CLI_OK || plan.done > 0) {
        int r = report(a, &suite, runs, n);
        int v = verdict(runs, n);
        if (rc == CLI_OK) rc = r != CLI_OK ? r : v;
    }
    free(runs);
    evalsuite_free(&suite);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_FLIGHT_OPTIONS,
        {"repeat", required_argument, 0, OPT_REPEAT},
        {"jobs", required_argument, 0, OPT_JOBS},
        {"verify", required_argument, 0, OPT_VERIFY},
        {"price-in", required_argument, 0, OPT_PRICE_IN},
        {"price-out", required_argument, 0, OPT_PRICE_OUT},
        {"html", required_argument, 0, OPT_HTML},
        {"compare", no_argument, 0, OPT_COMPARE},
        {"quiet", no_argument, 0, OPT_QUIET},
        {0, 0, 0, 0},
    };
    eval_args a = {.c = {.cmd = "eval"}, .repeat = 1, .jobs = 1, .price_in = -1, .price_out = -1};
    cli_flight_args_init(&a.f);
    int r = cli_parse_options(&a.c, argc, argv, opts, usage, on_option, &a);
    if (r >= 0) return r;
    if (a.compare) return compare(&a, argc, argv);
    /* The server and model every run is given: the flags, else the
     * environment's, as `aloft run` itself would resolve them. */
    static llm_config cfg;
    cli_flight_llm(&a.f, &cfg);
    a.llm_url = cfg.base_url;
    a.model = cli_model(a.f.model);
    if (!a.model) return cli_usage_error("eval", "no model: give --model NAME or set ALOFT_MODEL");
    if (a.f.prompts && (r = cli_check_prompts("eval", a.f.prompts)) >= 0) return r;
    return evaluate(&a, argc, argv);
}
