/*
 * JSON text for the host's output edges: the CLI's --json documents, the
 * web UI's responses and its server-sent events. cJSON copies string bytes
 * as they are, so a plan, an LLM reply or a stored row with invalid UTF-8
 * would make invalid JSON; every document that leaves the host goes through
 * jsonout_print instead of cJSON_Print*.
 */
#ifndef ALOFT_JSONOUT_H
#define ALOFT_JSONOUT_H

#include <cjson/cJSON.h>

/* Replaces, in place, every string value and member name of DOC that is not
 * valid UTF-8 with its repair (invalid bytes become U+FFFD). Returns 0, or -1
 * when out of memory (DOC is still a valid tree). */
int jsonout_repair(cJSON *doc);

/* DOC (repaired in place) as compact one-line JSON text in which no control
 * character is left raw: cJSON escapes C0, this escapes DEL and the C1
 * controls (U+0080-U+009F) as \u00XX, so the text is safe on a terminal.
 * Malloc'd (free it); NULL when out of memory. */
char *jsonout_print(cJSON *doc);

#endif
