/*
 * aloft: fly a drone from plain English. This file only dispatches to the
 * commands of SPEC §2 (host/cmd/).
 */
#include "cmd/cli.h"
#include "term.h"
#include "verify/verify_worker.h"
#include "worker/vm.h"
#include "worker/worker.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"check", cmd_check, "parse and validate a MiniSpec plan"},
    {"transpile", cmd_transpile, "print the Lua a plan compiles to"},
    {"run", cmd_run, "fly one mission (simulator or Tello)"},
    {"lua", cmd_lua, "run a Lua script in the sandbox with all skills bound"},
    {"skills", cmd_skills, "list the skills"},
    {"detect", cmd_detect, "run vision on images"},
    {"serve", cmd_serve, "web UI"},
    {"log", cmd_log, "mission history"},
    {"eval", cmd_eval, "score an LLM planner on the benchmark suite"},
    {"bench", cmd_bench, "benchmark suite"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: aloft COMMAND [OPTIONS] [ARGS]\n\n"
                 "Fly a drone from plain English: an LLM writes the plan in MiniSpec,\n"
                 "aloft checks it and runs it in a sandboxed Lua VM.\n\nCommands:\n");
    for (const command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\nRun 'aloft COMMAND --help' for a command's options.\n"
                 "Exit status: 0 success, 1 the plan/mission/input failed, 2 usage error.\n");
}

/* Every byte a command prints goes through term_escape (host/term.h): text
 * from plans, skills, the LLM and the store reaches stdout and stderr from
 * many places, and escaping at the stream means none of them can forget it.
 * glibc's stdout and stderr are plain variables that may be set. */
static FILE *plain_stdout, *plain_stderr;

/* At exit the escaping streams are flushed and closed (freeing them), and
 * whatever runs later writes to the plain ones. */
static void close_escaped_streams(void)
{
    FILE *out = stdout, *err = stderr;
    stdout = plain_stdout;
    stderr = plain_stderr;
    if (out != plain_stdout) fclose(out);
    if (err != plain_stderr) fclose(err);
}

static void escape_standard_streams(void)
{
    plain_stdout = stdout;
    plain_stderr = stderr;
    /* Registered first, so it runs after every later exit handler. */
    atexit(close_escaped_streams);
    FILE *out = term_stream(STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
    FILE *err = term_stream(STDERR_FILENO, _IONBF);
    if (out) stdout = out;
    if (err) stderr = err;
}

int main(int argc, char **argv)
{
    /* Hidden: a worker process this program started (host/worker/worker.h).
     * It prints nothing of a plan's (its output travels to the host in
     * frames), so it keeps the plain streams and allocates nothing before
     * its confinement checks for leaks. */
    if (argc > 1 && strcmp(argv[1], "__worker") == 0) {
        worker_set_extra(verify_worker_take); /* verification's worlds */
        return worker_main(argc - 1, argv + 1);
    }
    escape_standard_streams();
    /* A file past RLIMIT_FSIZE fails with EFBIG instead of killing the
     * process: pictures, the store and the report then end the mission
     * cleanly (the drone lands, the error is reported). */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    /* The Lua VMs of missions and scripts run in worker processes: this
     * same program, re-executed with a clean address space. */
    vm_set_worker_program("/proc/self/exe");
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (strcmp(name, "help") == 0 && argc > 2) {
            for (const command *c = commands; c->name; c++) {
                if (strcmp(c->name, argv[2]) == 0) {
                    char *args[] = {(char *)c->name, "--help", NULL};
                    return c->run(2, args);
                }
            }
        }
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("aloft %s\n", ALOFT_VERSION);
        return CLI_OK;
    }
    for (const command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "aloft: unknown command '%s'\n", name);
    usage(stderr);
    return CLI_USAGE;
}
