/*
 * Files compiled into the binary: lua/NAME.lua, skills/NAME.lua, prompts/NAME.txt,
 * web/NAME.html|js|css (the web UI).
 * The table is generated at build time by cmake/embed.cmake.
 */
#ifndef ALOFT_EMBEDDED_H
#define ALOFT_EMBEDDED_H

#include <stddef.h>

typedef struct embedded_file {
    const char *path; /* relative to the source root, e.g. "skills/scan.lua" */
    const char *data; /* NUL-terminated for convenience */
    size_t len;       /* without the terminating NUL */
} embedded_file;

/* Terminated by an entry whose path is NULL. */
extern const embedded_file embedded_files[];

/* The file at exactly PATH, or NULL. */
const embedded_file *embedded_find(const char *path);

#endif
