/*
 * The skill registry: every skill a plan or script may call, with the
 * metadata the MiniSpec checker, the prompts and `aloft skills` need.
 *
 * Low-level skills are registered from C (host/skills/builtin.c). High-level
 * skills are Lua files (the built-in skills/NAME.lua, plus user directories) that
 * return a table (SPEC §5):
 *   {name=, description=, args={{name=,type=}}, returns=, run=function(...) end}
 * or `minispec="..."` instead of `run`. Reading those files and compiling the
 * MiniSpec ones is the loader's work (host/loader/loader.h), a layer above both
 * this registry and the MiniSpec compiler: the registry is a leaf.
 *
 * Abbreviations are assigned by registry_assign_abbrs: deterministic, unique,
 * at most two letters, and exactly TypeFly's for the built-ins.
 *
 * A registry is built once, then only read; reading is thread-safe.
 */
#ifndef ALOFT_SKILLS_REGISTRY_H
#define ALOFT_SKILLS_REGISTRY_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

#define SKILL_NAME_MAX 48
#define SKILL_MAX_ARGS 8
#define SKILL_DESC_MAX 512

typedef enum skill_type {
    SKILL_T_NONE = 0, /* no value (replan) */
    SKILL_T_INT,
    SKILL_T_FLOAT,
    SKILL_T_STR,
    SKILL_T_BOOL,
    SKILL_T_ANY,
} skill_type;

typedef enum skill_level { SKILL_LOW, SKILL_HIGH } skill_level;

typedef struct skill_arg {
    char name[SKILL_NAME_MAX];
    skill_type type;
    bool optional;
} skill_arg;

struct skill_ctx;

/* A low-level skill. Arguments are already checked and converted to their
 * declared types at stack indices 1..nargs (optional ones may be nil). It
 * pushes exactly one result and returns 1. A skill that cannot act (no drone,
 * refused by the constraint check) returns false; a hard error is raised with
 * luaL_error and a message a user understands. */
typedef int (*skill_fn)(struct skill_ctx *ctx, lua_State *L);

/* What a skill does to the world; used for first_action_ms and the prompts. */
enum {
    SKILL_MOVES = 1 << 0,  /* moves the drone */
    SKILL_SEES = 1 << 1,   /* reads the camera / vision */
    SKILL_ASKS = 1 << 2,   /* calls the LLM (probe) */
    SKILL_CONTROL = 1 << 3 /* control flow (replan) */
};

typedef struct skill {
    char name[SKILL_NAME_MAX];
    char abbr[3];
    char alias[SKILL_NAME_MAX]; /* second accepted name ("query" for probe), or "" */
    char alias_abbr[3];         /* its abbreviation ("q"), or "" */
    skill_level level;
    int nargs;    /* declared arguments */
    int min_args; /* arguments that must be given */
    skill_arg args[SKILL_MAX_ARGS];
    skill_type returns;
    char description[SKILL_DESC_MAX];
    unsigned flags; /* SKILL_MOVES | ... */

    skill_fn fn; /* low-level only */

    /* High-level only: where it came from and its text. */
    char *path;     /* "skills/scan.lua" for built-ins, the file path otherwise */
    char *source;   /* the file's Lua text */
    char *minispec; /* the MiniSpec definition, when the file has minispec= */
    char *lua_code; /* the Lua chunk that returns the run function, once compiled */
    bool builtin;
} skill;

typedef struct skill_registry skill_registry;

/* Reports a skill file that could not be loaded; the others still load. */
typedef void (*registry_report_fn)(void *ud, const char *path, const char *message);

skill_registry *registry_new(void);
void registry_free(skill_registry *reg);

/* Adds a skill (copied). Fails on a duplicate name. */
int registry_add(skill_registry *reg, const skill *s, char *err, size_t errlen);

/* Assigns abbreviations: requested ones (abbr= in a skill file) if free, then
 * the rest. Call once, after every skill is added; problems go to REPORT. */
void registry_assign_abbrs(skill_registry *reg, registry_report_fn report, void *ud);

/* Removes the skill at index I (the loader drops skills that fail to compile). */
void registry_remove(skill_registry *reg, size_t i);

/* True if S is a valid skill name or abbreviation: [a-z_][a-z0-9_]*. */
bool registry_valid_name(const char *s);

/* Finds a skill by full name, alias or abbreviation (LEN bytes of NAME). */
const skill *registry_find(const skill_registry *reg, const char *name, size_t len);

size_t registry_count(const skill_registry *reg);
const skill *registry_at(const skill_registry *reg, size_t i);
/* The same skill, writable: only while the registry is being built. */
skill *registry_at_mut(skill_registry *reg, size_t i);

const char *skill_type_name(skill_type t);
/* Parses "int", "float", "str"/"string", "bool", "any"; -1 if unknown. */
int skill_type_parse(const char *s);

#endif
