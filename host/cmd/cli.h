/*
 * Shared pieces of the command line (SPEC §2). Each command lives in its own
 * host/cmd/cmd_NAME.c as `int cmd_NAME(int argc, char **argv)` where argv[0]
 * is the command name; host/main.c dispatches.
 *
 * Exit status: CLI_OK (0) success, CLI_FAIL (1) the plan/mission/input failed,
 * CLI_USAGE (2) usage error. With --json exactly one JSON document goes to
 * stdout; progress and diagnostics go to stderr.
 */
#ifndef ALOFT_CMD_CLI_H
#define ALOFT_CMD_CLI_H

#include "minispec/minispec.h"
#include "sandbox/sandbox.h"
#include "skills/registry.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Plans, scripts and scene files larger than this are refused. */
#define CLI_MAX_INPUT (4u * 1024u * 1024u)
#define CLI_MAX_SKILL_DIRS 16

/* Long-option codes shared by several commands. */
enum {
    OPT_MAX_INSTRUCTIONS = 1000,
    OPT_MAX_MEMORY,
    OPT_TIMEOUT_MS,
    OPT_SKILLS,
    OPT_JSON,
    OPT_SCENE,
    OPT_HELP,
    OPT_IN_PROCESS,
    /* The flight options of run and serve (CLI_FLIGHT_OPTIONS). */
    OPT_LLM_URL,
    OPT_MODEL,
    OPT_NO_STREAM,
    OPT_MAX_TRIES,
    OPT_MAX_REPLANS,
    OPT_LLM_TIMEOUT,
    OPT_LLM_IDLE,
    OPT_PROMPTS,
    OPT_CANDIDATES,
    OPT_TIME_SCALE,
    OPT_SEED,
    OPT_DB,
    /* The drone (cli_drone.h; serve takes --drone and the Tello's too). */
    OPT_DRONE,
    OPT_TELLO,            /* every Tello option: see tello_config_option */
    OPT_MAVLINK,          /* every MAVLink option: see mavlink_config_option */
    OPT_FIRST_FREE = 1100 /* commands number their own options from here */
};

/* The options of the limit flags, --skills, --json, --scene and --help, to be
 * spliced into a command's getopt_long table with CLI_COMMON_OPTIONS. */
#define CLI_LIMIT_OPTIONS                                                                          \
    {"max-instructions", required_argument, 0, OPT_MAX_INSTRUCTIONS},                              \
        {"max-memory", required_argument, 0, OPT_MAX_MEMORY},                                      \
    {                                                                                              \
        "timeout-ms", required_argument, 0, OPT_TIMEOUT_MS                                         \
    }
#define CLI_COMMON_OPTIONS                                                                         \
    {"skills", required_argument, 0, OPT_SKILLS}, {"json", no_argument, 0, OPT_JSON},              \
        {"in-process", no_argument, 0, OPT_IN_PROCESS},                                            \
    {                                                                                              \
        "help", no_argument, 0, OPT_HELP                                                           \
    }

typedef struct cli_common {
    const char *cmd;
    /* The long name of the option cli_parse_options hands to a command's
     * own handler (for options that share one code), or NULL. */
    const char *option;
    bool json;
    bool help;
    const char *scene;
    const char *skill_dirs[CLI_MAX_SKILL_DIRS];
    int n_skill_dirs;
    sandbox_limits limits;
} cli_common;

/* Handles one option shared by commands. Returns 1 if OPT was one of them
 * (and stored), 0 if not, or -1 after printing a usage error. */
int cli_common_option(cli_common *c, int opt, const char *arg);

/* A command's own options: returns 0 when OPT was stored, or an exit status
 * after printing a usage error. */
typedef int (*cli_option_fn)(void *ud, int opt, const char *arg);

/* Parses ARGV with getopt_long over OPTS (GNU order: options anywhere).
 * Shared options go to cli_common_option, the rest to ON_OPTION (NULL: none
 * expected). An unknown option ("unknown option '--x'") or a missing value
 * ("--db needs a value") is a usage error. --help prints USAGE. Returns -1 to go on, or the exit
 * status to return (CLI_OK after --help, CLI_USAGE after a usage error); on -1, optind is the first
 * positional argument. */
int cli_parse_options(cli_common *c, int argc, char **argv, const struct option *opts,
                      const char *usage, cli_option_fn on_option, void *ud);

/* Reads the command's one positional FILE|- argument (after
 * cli_parse_options). Returns the text, or NULL with *STATUS set to the exit
 * status after printing the problem. */
char *cli_read_one_input(const cli_common *c, int argc, char **argv, size_t *len, int *status);

/* A command's one MiniSpec plan (check, transpile): its text, the skills
 * it was checked against and the compiler's result. */
typedef struct cli_plan {
    char *src;
    size_t len;
    skill_registry *reg;
    ms_result r;
} cli_plan;

/* Reads the one positional FILE|- argument (after cli_parse_options),
 * loads the skills of C and compiles the plan into P. Returns -1 to go on
 * (P then needs cli_plan_free), else the exit status after printing the
 * problem. */
int cli_plan_compile(const cli_common *c, int argc, char **argv, cli_plan *p);

/* Prints P's diagnostics as LINE:COL: message lines on stderr. */
void cli_plan_print_diagnostics(const cli_plan *p);

void cli_plan_free(cli_plan *p);

/* Prints "aloft CMD: message" and a hint to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The usage error for ARG, an option that none of OPTS is: "unknown option
 * '--tme-scale' (did you mean '--time-scale'?)" when one is a typo away.
 * Returns CLI_USAGE. */
int cli_unknown_option(const char *cmd, const char *arg, const struct option *opts);

/* Prints "aloft CMD: message" to stderr; returns CLI_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message of the last cli_fail or cli_usage_error ("" before any), cut
 * to 1 KiB: the "error" of a --json document for a command that failed
 * before it had one. Not thread-safe: for the command's own thread. */
const char *cli_last_error(void);

/* Reads a whole file, or stdin for "-", refusing more than MAX bytes.
 * Returns a NUL-terminated malloc'd buffer, or NULL with a message. */
char *cli_read_input(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* Parses a non-negative integer with an optional k/M/G suffix (1024-based
 * for sizes when BINARY). Returns 0, or -1 if malformed. */
int cli_parse_u64(const char *s, bool binary, unsigned long long *out);

/* Prints the document to stdout (compact, one line, valid UTF-8: see
 * host/jsonout.h) and frees it. Returns CLI_OK, or CLI_FAIL (said on stderr)
 * when stdout refused it: a full disk, a file-size limit, a closed pipe. */
int cli_print_json(cJSON *doc);

/* Loads the registry with built-ins and --skills directories; problems with
 * user skill files are reported on stderr as "aloft: PATH: reason". */
skill_registry *cli_load_registry(const cli_common *c);

/* Ctrl-C (SIGINT) and SIGTERM during a run. Between cli_cancel_begin and
 * cli_cancel_end a signal does not kill the process: it sets the flag that
 * cli_cancel_flag returns (for the LLM client and the drone's abort
 * callback) and cancels the sandbox given to cli_cancel_sandbox, if any —
 * also one given after the signal came. */
void cli_cancel_begin(void);
/* The same for a flight (mission/flight.h), which has its own watchdog
 * and stop handle: a signal stops H (flight_stop), and cli_cancel_sandbox
 * only points the signals at a sandbox outside the flight's own (a
 * verification world's). */
struct flight_handle;
void cli_cancel_begin_flight(struct flight_handle *h);
void cli_cancel_sandbox(sandbox *sb);
void cli_cancel_end(void);

/* The watchdog (SPEC §6, mission/watchdog.h) runs between cli_cancel_begin
 * and cli_cancel_end and watches the sandbox given to cli_cancel_sandbox:
 * when that VM does not end 2 s after its wall-clock limit or 1 s after a
 * signal, FN (set before that sandbox is given; NULL: a message on stderr) lands
 * the drone and reports the mission as hung with MSG, on the watchdog's
 * thread; then the process exits with status 1 without waiting for the
 * VM's thread, which may never return. cli_cancel_end clears FN. */
void cli_cancel_on_hang(void (*fn)(void *ud, const char *msg), void *ud);
atomic_bool *cli_cancel_flag(void);

/* The help lines of the LLM options that `run --task` and `serve` share. */
#define CLI_LLM_HELP                                                                               \
    "  --llm-url URL         OpenAI-compatible base URL (default\n"                                \
    "                        $OPENAI_BASE_URL or https://api.openai.com/v1)\n"                     \
    "  --model NAME          the model (default $ALOFT_MODEL); key: $OPENAI_API_KEY\n"             \
    "  --no-stream           wait for the whole plan before running it\n"                          \
    "  --max-tries N         plans asked for when they fail the checker (default 3)\n"             \
    "  --max-replans N       new plans after rp, a failed skill or a refused\n"                    \
    "                        motion (default 3)\n"                                                 \
    "  --prompts DIR         prompt templates to use instead of the built-in ones\n"               \
    "                        (any of plan.txt, planner.txt, ... in prompts/)\n"                    \
    "  --llm-timeout-ms N    limit for one LLM call, retries included (default 120000)\n"

/* The help lines of --candidates, shared by run, eval and serve. */
#define CLI_CANDIDATES_HELP                                                                        \
    "  --candidates K        ask the LLM for K plans at once (1..8; `n` in one\n"                  \
    "                        request, or K requests when the server does not\n"                    \
    "                        support it), keep those the checker (and --verify)\n"                 \
    "                        accepts, fly the one with the fewest tokens; turns\n"                 \
    "                        stream execution off. The report lists every\n"                       \
    "                        candidate and what they cost\n"

/* The options of a flight that `run` and `serve` share: the LLM, the
 * mission controller, the simulator and the store. */
#define CLI_FLIGHT_OPTIONS                                                                         \
    {"llm-url", required_argument, 0, OPT_LLM_URL}, {"model", required_argument, 0, OPT_MODEL},    \
        {"no-stream", no_argument, 0, OPT_NO_STREAM},                                              \
        {"max-tries", required_argument, 0, OPT_MAX_TRIES},                                        \
        {"max-replans", required_argument, 0, OPT_MAX_REPLANS},                                    \
        {"llm-timeout-ms", required_argument, 0, OPT_LLM_TIMEOUT},                                 \
        {"prompts", required_argument, 0, OPT_PROMPTS},                                            \
        {"candidates", required_argument, 0, OPT_CANDIDATES},                                      \
        {"time-scale", required_argument, 0, OPT_TIME_SCALE},                                      \
        {"seed", required_argument, 0, OPT_SEED},                                                  \
    {                                                                                              \
        "db", required_argument, 0, OPT_DB                                                         \
    }

typedef struct cli_flight_args {
    const char *llm_url, *model, *prompts, *db;
    bool no_stream;
    long long max_tries, llm_timeout_ms, llm_idle_ms; /* 0: the defaults */
    long long max_replans;                            /* -1: the default */
    int candidates;                                   /* 0: none */
    double time_scale;
    bool time_scale_set;
    unsigned long long seed;
    bool seed_set;
} cli_flight_args;

/* The defaults: time scale 1, seed 1, the controller's tries and replans. */
void cli_flight_args_init(cli_flight_args *a);

/* Handles one of CLI_FLIGHT_OPTIONS (and --llm-idle-timeout-ms). Returns 1
 * if OPT was one (and stored), 0 if not, or -1 after a usage error. */
int cli_flight_option(cli_flight_args *a, const char *cmd, int opt, const char *arg);

/* The LLM settings of A: the environment's (llm_config_defaults), then
 * the flags. */
struct llm_config;
void cli_flight_llm(const cli_flight_args *a, struct llm_config *cfg);

/* Parses --candidates K (1..MISSION_CANDIDATES_MAX) into *K. Returns 0, or
 * CLI_USAGE after printing the usage error. */
int cli_candidates(const char *cmd, const char *arg, int *k);

/* Checks a --prompts DIR: a directory whose templates (any of prompts/'s
 * file names; the rest stay built in) all load. Returns -1 when it is fine,
 * else the exit status after printing the problem. */
int cli_check_prompts(const char *cmd, const char *dir);
/* The LLM model a command asks: MODEL (from --model) if given and not
 * empty, else llm_config_defaults's ($ALOFT_MODEL, the one place that reads
 * it), else NULL. The string lives as long as MODEL, or the process. */
const char *cli_model(const char *model);

/* Limits from the command line, with the sandbox defaults filled in. */
sandbox_limits cli_limits(const cli_common *c);

/* The commands. */
int cmd_check(int argc, char **argv);
int cmd_transpile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_lua(int argc, char **argv);
int cmd_skills(int argc, char **argv);
int cmd_detect(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_eval(int argc, char **argv);

#endif
