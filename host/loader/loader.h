/*
 * The skill loader: builds a skill registry from the built-in skills and
 * user skill directories, and compiles the skills defined in MiniSpec.
 *
 * The registry (host/skills/registry.h) only holds metadata; this layer sits
 * above it and above the MiniSpec compiler, so that neither imports the other
 * in a circle. Every entry point that needs the usual skills calls
 * loader_standard.
 */
#ifndef ALOFT_LOADER_LOADER_H
#define ALOFT_LOADER_LOADER_H

#include "skills/registry.h"

#include <stdbool.h>
#include <stddef.h>

/* Adds the low-level skills and the built-in high-level skills. */
int loader_add_builtins(skill_registry *reg, char *err, size_t errlen);

/* Loads every *.lua in DIR (sorted by name). Returns the number of files that
 * failed (each reported through REPORT), or -1 if DIR cannot be read. */
int loader_load_dir(skill_registry *reg, const char *dir, registry_report_fn report, void *ud);

/* Loads one high-level skill from Lua text. PATH names it in messages. */
int loader_load_source(skill_registry *reg, const char *path, const char *src, size_t len,
                       bool builtin, char *err, size_t errlen);

/* Assigns abbreviations and compiles MiniSpec-defined skills. Call once,
 * after every skill is added. Skills that fail to compile are removed and
 * reported. Returns the number removed. */
int loader_finalize(skill_registry *reg, registry_report_fn report, void *ud);

/* Builds the usual registry: built-ins plus every directory of DIRS. Load
 * problems go to REPORT. NULL only if the built-ins themselves fail. */
skill_registry *loader_standard(const char *const *dirs, int ndirs, registry_report_fn report,
                                void *ud);

#endif
