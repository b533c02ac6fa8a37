/*
 * aloft: fly a drone from plain English. This file only dispatches to the
 * commands of SPEC §2 (host/cmd/).
 */
#include "cmd/cli.h"

#include <stdio.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
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
