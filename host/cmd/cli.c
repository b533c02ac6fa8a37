#include "cmd/cli.h"
#include "worker/vm.h"

#include "editdist.h"
#include "jsonout.h"
#include "llm/llm.h"
#include "llm/prompt.h"
#include "loader/loader.h"
#include "mission/candidates.h"
#include "mission/flight_stop.h"
#include "mission/watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The last message of cli_fail or cli_usage_error, for a --json document
 * that must say why the command ended (cli_last_error). */
static char last_error[1024];

/* Says "aloft CMD: message" on stderr and keeps the message. */
static void say_error(const char *cmd, const char *fmt, va_list ap)
{
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    fprintf(stderr, "aloft %s: %s\n", cmd, last_error);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_error(cmd, fmt, ap);
    fprintf(stderr, "Try 'aloft %s --help'.\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

/* Edits (insert, delete, replace) from A to B, counted up to 9. */
static int distance(const char *a, size_t na, const char *b, size_t nb)
{
    if (na > 40 || nb > 40) return 9;
    int d = editdist(a, na, b, nb, false);
    return d > 9 ? 9 : d;
}

int cli_unknown_option(const char *cmd, const char *arg, const struct option *opts)
{
    const char *name = arg;
    while (*name == '-')
        name++;
    size_t n = strcspn(name, "=");
    const char *best = NULL;
    int best_d = 3; /* a suggestion is at most two edits away */
    for (const struct option *o = opts; o && o->name; o++) {
        int d = distance(name, n, o->name, strlen(o->name));
        if (d < best_d) best = o->name, best_d = d;
    }
    if (best && arg[0] == '-' && arg[1] == '-')
        return cli_usage_error(cmd, "unknown option '%.*s' (did you mean '--%s'?)",
                               (int)(name - arg + n), arg, best);
    return cli_usage_error(cmd, "unknown option '%s'", arg);
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_error(cmd, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

const char *cli_last_error(void)
{
    return last_error;
}

int cli_parse_u64(const char *s, bool binary, unsigned long long *out)
{
    if (!s || !*s || *s == '-') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    unsigned long long mul = 1, k = binary ? 1024 : 1000;
    switch (*end) {
    case 'k':
    case 'K':
        mul = k;
        end++;
        break;
    case 'M':
        mul = k * k;
        end++;
        break;
    case 'G':
        mul = k * k * k;
        end++;
        break;
    default: break;
    }
    if (*end) return -1;
    if (mul > 1 && v > ~0ull / mul) return -1;
    *out = v * mul;
    return 0;
}

int cli_common_option(cli_common *c, int opt, const char *arg)
{
    unsigned long long v;
    switch (opt) {
    case OPT_HELP: c->help = true; return 1;
    case OPT_JSON: c->json = true; return 1;
    case OPT_IN_PROCESS:
        /* debugging only: a bug of the VM can then reach the drone */
        if (vm_workers_enabled())
            fprintf(stderr,
                    "aloft %s: --in-process: Lua runs inside this process (debugging "
                    "only: no worker process contains a crash of the VM)\n",
                    c->cmd);
        vm_use_in_process();
        return 1;
    case OPT_SCENE: c->scene = arg; return 1;
    case OPT_SKILLS:
        if (c->n_skill_dirs == CLI_MAX_SKILL_DIRS) {
            cli_usage_error(c->cmd, "at most %d --skills directories", CLI_MAX_SKILL_DIRS);
            return -1;
        }
        c->skill_dirs[c->n_skill_dirs++] = arg;
        return 1;
    case OPT_MAX_INSTRUCTIONS:
    case OPT_MAX_MEMORY:
    case OPT_TIMEOUT_MS:
        if (cli_parse_u64(arg, opt == OPT_MAX_MEMORY, &v) || v == 0) {
            cli_usage_error(c->cmd, "'%s' is not a positive number", arg);
            return -1;
        }
        if (opt == OPT_MAX_INSTRUCTIONS)
            c->limits.max_instructions = v;
        else if (opt == OPT_MAX_MEMORY)
            c->limits.max_memory = (size_t)v;
        else
            c->limits.timeout_ms = v;
        return 1;
    default: return 0;
    }
}

char *cli_read_input(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > max) {
            snprintf(err, errlen, "'%s' is larger than %zu bytes", is_stdin ? "stdin" : path, max);
            free(buf);
            if (!is_stdin) fclose(f);
            return NULL;
        }
        if (got == 0) break;
    }
    bool failed = ferror(f);
    if (!is_stdin) fclose(f);
    if (failed) {
        snprintf(err, errlen, "cannot read '%s'", path);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

int cli_print_json(cJSON *doc)
{
    char *text = jsonout_print(doc);
    cJSON_Delete(doc);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
    }
    /* A full disk or RLIMIT_FSIZE (EFBIG, SIGXFSZ being ignored) shows here:
     * the document is lost, so say so where it may still be read. */
    if (fflush(stdout) != 0 || ferror(stdout) || !text) {
        fprintf(stderr, "aloft: the JSON report could not be written: %s\n",
                text ? strerror(errno) : "out of memory");
        return CLI_FAIL;
    }
    return CLI_OK;
}

static void report_skill_problem(void *ud, const char *path, const char *message)
{
    (void)ud;
    fprintf(stderr, "aloft: %s: %s\n", path, message);
}

skill_registry *cli_load_registry(const cli_common *c)
{
    skill_registry *reg =
        loader_standard(c->skill_dirs, c->n_skill_dirs, report_skill_problem, NULL);
    if (!reg) cli_fail(c->cmd, "the built-in skills failed to load");
    return reg;
}

static atomic_bool cancel_flag;
static sandbox *_Atomic cancel_target;
static flight_handle *_Atomic flight_target; /* the flight a signal stops */

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&cancel_flag, true);
    sandbox *sb = atomic_load(&cancel_target);
    if (sb) sandbox_cancel(sb); /* an atomic store: safe in a handler */
    flight_handle *h = atomic_load(&flight_target);
    if (h) flight_stop(h); /* atomics only: safe in a handler */
}

static void set_handler(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static watchdog *hang_watch;
static void (*hang_fn)(void *ud, const char *msg);
static void *hang_ud;

void cli_cancel_on_hang(void (*fn)(void *ud, const char *msg), void *ud)
{
    hang_fn = fn;
    hang_ud = ud;
}

static void on_hang(void *ud, sandbox *sb, watchdog_why why, const char *msg)
{
    (void)ud, (void)sb, (void)why;
    if (hang_fn)
        hang_fn(hang_ud, msg);
    else
        fprintf(stderr, "aloft: %s\n", msg);
    fflush(stdout);
    fflush(stderr);
    /* The VM's thread is stuck and may never return: joining it, or even
     * running exit()'s handlers while it holds the state, could hang too. */
    _exit(CLI_FAIL);
}

void cli_cancel_begin(void)
{
    atomic_store(&cancel_flag, false);
    atomic_store(&cancel_target, NULL);
    set_handler(on_signal);
    char err[128];
    hang_watch = watchdog_start(on_hang, NULL, &cancel_flag, err, sizeof err);
    if (!hang_watch) fprintf(stderr, "aloft: %s\n", err);
}

void cli_cancel_begin_flight(flight_handle *h)
{
    atomic_store(&cancel_flag, false);
    atomic_store(&cancel_target, NULL);
    atomic_store(&flight_target, h);
    set_handler(on_signal);
    hang_watch = NULL;
}

void cli_cancel_sandbox(sandbox *sb)
{
    atomic_store(&cancel_target, sb);
    if (sb && atomic_load(&cancel_flag)) sandbox_cancel(sb);
    watchdog_watch(hang_watch, sb);
}

void cli_cancel_end(void)
{
    watchdog_stop(hang_watch);
    hang_watch = NULL;
    hang_fn = NULL;
    set_handler(SIG_DFL);
    atomic_store(&cancel_target, NULL);
    atomic_store(&flight_target, NULL);
}

atomic_bool *cli_cancel_flag(void)
{
    return &cancel_flag;
}

sandbox_limits cli_limits(const cli_common *c)
{
    sandbox_limits l = c->limits;
    if (!l.max_instructions) l.max_instructions = SANDBOX_DEFAULT_INSTRUCTIONS;
    if (!l.max_memory) l.max_memory = SANDBOX_DEFAULT_MEMORY;
    if (!l.timeout_ms) l.timeout_ms = SANDBOX_DEFAULT_TIMEOUT_MS;
    if (!l.max_output) l.max_output = SANDBOX_DEFAULT_OUTPUT;
    return l;
}

int cli_parse_options(cli_common *c, int argc, char **argv, const struct option *opts,
                      const char *usage, cli_option_fn on_option, void *ud)
{
    int opt, idx;
    optind = 1;
    /* ':' first: getopt prints nothing and tells a missing value (':') from
     * an unknown option ('?'), so that both get this program's messages. */
    while ((void)(idx = -1), (opt = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
        if (opt == 'h') opt = OPT_HELP;
        if (opt == ':') return cli_usage_error(c->cmd, "%s needs a value", argv[optind - 1]);
        if (opt == '?') return cli_unknown_option(c->cmd, argv[optind - 1], opts);
        int r = cli_common_option(c, opt, optarg);
        if (r < 0) return CLI_USAGE;
        if (r == 1) continue;
        if (!on_option) return cli_unknown_option(c->cmd, argv[optind - 1], opts);
        c->option = idx >= 0 ? opts[idx].name : NULL;
        r = on_option(ud, opt, optarg);
        c->option = NULL;
        if (r) return r;
    }
    if (c->help) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    return -1;
}

char *cli_read_one_input(const cli_common *c, int argc, char **argv, size_t *len, int *status)
{
    if (optind != argc - 1) {
        *status = cli_usage_error(c->cmd, optind == argc ? "missing FILE (or - for stdin)"
                                                         : "expected one FILE");
        return NULL;
    }
    char err[512];
    char *text = cli_read_input(argv[optind], CLI_MAX_INPUT, len, err, sizeof err);
    if (!text) *status = cli_fail(c->cmd, "%s", err);
    return text;
}

int cli_plan_compile(const cli_common *c, int argc, char **argv, cli_plan *p)
{
    int rc;
    memset(p, 0, sizeof *p);
    p->src = cli_read_one_input(c, argc, argv, &p->len, &rc);
    if (!p->src) return rc;
    p->reg = cli_load_registry(c);
    if (!p->reg) {
        free(p->src);
        return CLI_FAIL;
    }
    minispec_compile(p->reg, p->src, p->len, NULL, &p->r);
    return -1;
}

void cli_plan_print_diagnostics(const cli_plan *p)
{
    for (int i = 0; i < p->r.ndiags; i++)
        fprintf(stderr, "%d:%d: %s\n", p->r.diags[i].line, p->r.diags[i].col,
                p->r.diags[i].message);
}

void cli_plan_free(cli_plan *p)
{
    ms_result_free(&p->r);
    registry_free(p->reg);
    free(p->src);
}

static llm_config env_llm;

static void read_env_llm(void)
{
    llm_config_defaults(&env_llm);
}

const char *cli_model(const char *model)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (model && *model) return model;
    pthread_once(&once, read_env_llm);
    return env_llm.model[0] ? env_llm.model : NULL;
}

int cli_candidates(const char *cmd, const char *arg, int *k)
{
    unsigned long long v;
    if (cli_parse_u64(arg, false, &v) || v < 1 || v > MISSION_CANDIDATES_MAX)
        return cli_usage_error(cmd, "--candidates: '%s' is not a number of plans in 1..%d", arg,
                               MISSION_CANDIDATES_MAX);
    *k = (int)v;
    return 0;
}

int cli_check_prompts(const char *cmd, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_usage_error(cmd, "--prompts: '%s' is not a directory", dir);
    char err[1024];
    prompt_set *ps = prompt_load(dir, err, sizeof err);
    if (!ps) return cli_fail(cmd, "--prompts: %s", err);
    prompt_free(ps);
    char unknown[512], names[256];
    int n = prompt_unknown_files(dir, unknown, sizeof unknown);
    if (n > 0) {
        prompt_file_names(names, sizeof names);
        fprintf(stderr,
                "aloft %s: warning: --prompts %s: %s %s no template and %s ignored "
                "(templates: %s)\n",
                cmd, dir, unknown, n == 1 ? "is" : "are", n == 1 ? "is" : "are", names);
    }
    return -1;
}
