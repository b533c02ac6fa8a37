/* aloft skills [--json] [--skills DIR]: list every skill a plan may call. */
#include "cmd/cli.h"
#include "loader/loader.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft skills [--json] [--skills DIR]...\n"
    "\n"
    "List the skills plans and scripts can call: the built-in low-level (C) and\n"
    "high-level (Lua) skills, and those of every --skills directory.\n"
    "\n"
    "  --json         print [{\"name\",\"abbr\",\"level\",\"args\",\"returns\",\"description\"}]\n"
    "  --skills DIR   also load the *.lua skill files of DIR (repeatable)\n"
    "\n"
    "Exit status: 0, or 1 if a skill file could not be loaded (reported on stderr).\n";

typedef struct problem_count {
    int n;
} problem_count;

static void count_problem(void *ud, const char *path, const char *message)
{
    ((problem_count *)ud)->n++;
    fprintf(stderr, "aloft skills: %s: %s\n", path, message);
}

static cJSON *skill_json(const skill *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "abbr", s->abbr);
    cJSON_AddStringToObject(o, "level", s->level == SKILL_LOW ? "low" : "high");
    cJSON *args = cJSON_AddArrayToObject(o, "args");
    for (int i = 0; i < s->nargs; i++) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "name", s->args[i].name);
        cJSON_AddStringToObject(a, "type", skill_type_name(s->args[i].type));
        if (s->args[i].optional) cJSON_AddTrueToObject(a, "optional");
        cJSON_AddItemToArray(args, a);
    }
    cJSON_AddStringToObject(o, "returns", skill_type_name(s->returns));
    cJSON_AddStringToObject(o, "description", s->description);
    if (s->alias[0]) {
        cJSON_AddStringToObject(o, "alias", s->alias);
        cJSON_AddStringToObject(o, "alias_abbr", s->alias_abbr);
    }
    if (s->path) cJSON_AddStringToObject(o, "path", s->path);
    return o;
}

static void print_table(const skill_registry *reg)
{
    for (size_t i = 0; i < registry_count(reg); i++) {
        const skill *s = registry_at(reg, i);
        char sig[256];
        int k = snprintf(sig, sizeof sig, "%s(", s->name);
        for (int a = 0; a < s->nargs && k < (int)sizeof sig; a++)
            k += snprintf(sig + k, sizeof sig - (size_t)k, "%s%s:%s%s", a ? ", " : "",
                          s->args[a].name, skill_type_name(s->args[a].type),
                          s->args[a].optional ? "?" : "");
        if (k < (int)sizeof sig) snprintf(sig + k, sizeof sig - (size_t)k, ")");
        printf("%-3s %-4s %-40s -> %-5s %s\n", s->abbr, s->level == SKILL_LOW ? "low" : "high", sig,
               skill_type_name(s->returns), s->description);
        if (s->alias[0])
            printf("%-3s      %s: another name for %s\n", s->alias_abbr, s->alias, s->name);
    }
}

int cmd_skills(int argc, char **argv)
{
    cli_common c = {.cmd = "skills"};
    static const struct option opts[] = {CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    int rc = cli_parse_options(&c, argc, argv, opts, usage, NULL, NULL);
    if (rc >= 0) return rc;
    if (optind < argc) return cli_usage_error(c.cmd, "unexpected argument '%s'", argv[optind]);

    problem_count problems = {0};
    skill_registry *reg = loader_standard(c.skill_dirs, c.n_skill_dirs, count_problem, &problems);
    if (!reg) return cli_fail(c.cmd, "the built-in skills failed to load");
    if (c.json) {
        cJSON *list = cJSON_CreateArray();
        for (size_t i = 0; i < registry_count(reg); i++)
            cJSON_AddItemToArray(list, skill_json(registry_at(reg, i)));
        if (cli_print_json(list) != CLI_OK) problems.n++;
    } else {
        print_table(reg);
    }
    registry_free(reg);
    return problems.n ? CLI_FAIL : CLI_OK;
}
