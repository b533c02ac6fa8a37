/*
 * What `aloft eval` shows a person: the table on stdout, the HTML page with
 * a chart, and two runs side by side (--compare). All read the `eval --json`
 * document, so a saved document can be shown again or compared later.
 */
#ifndef ALOFT_EVAL_REPORT_H
#define ALOFT_EVAL_REPORT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

/* One line per task and an overall line. */
void evalreport_table(FILE *out, const cJSON *doc);

/* Writes a self-contained page (no script, no network): a chart of success
 * rate and median first-action time per task, and the table. Returns 0, or
 * -1 with a message. */
int evalreport_html(const char *path, const cJSON *doc, char *err, size_t errlen);

/* Two documents side by side per task (matched by name) and overall. */
void evalreport_compare(FILE *out, const cJSON *a, const char *name_a, const cJSON *b,
                        const char *name_b);

#endif
