/*
 * The table, the HTML page and the comparison of eval documents. Values the
 * document lacks (null medians, no cost) show as "-".
 */
#include "eval/report.h"

#include "errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

/* "%*.*f" of V, or "-" right-aligned when it is unknown. */
static void cell(FILE *out, int width, int prec, double v)
{
    if (isnan(v))
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, " %*.*f", width, prec, v);
}

static void row(FILE *out, const char *name, const cJSON *e, bool cost)
{
    fprintf(out, "%-22.22s", name);
    cell(out, 5, 0, num(e, "runs"));
    cell(out, 4, 0, num(e, "success"));
    cell(out, 5, 0, 100 * num(e, "success_rate"));
    cell(out, 5, 2, num(e, "tries_mean"));
    cell(out, 7, 2, num(e, "replans_mean"));
    cell(out, 4, 0, num(e, "violations"));
    cell(out, 8, 0, num(e, "first_action_ms_median"));
    cell(out, 8, 0, num(e, "total_ms_median"));
    cell(out, 8, 0, num(e, "prompt_tokens"));
    cell(out, 7, 0, num(e, "completion_tokens"));
    cell(out, 7, 0, num(e, "cached_tokens"));
    if (cost) cell(out, 8, 4, num(e, "cost"));
    fputc('\n', out);
}

void evalreport_table(FILE *out, const cJSON *doc)
{
    const cJSON *overall = cJSON_GetObjectItemCaseSensitive(doc, "overall");
    bool cost = cJSON_GetObjectItemCaseSensitive(overall, "cost") != NULL;
    fprintf(out, "model %s at %s, %.0f repeat(s)\n", str(doc, "model"), str(doc, "llm_url"),
            num(doc, "repeat"));
    fprintf(out, "%-22s %5s %4s %5s %5s %7s %4s %8s %8s %8s %7s %7s%s\n", "task", "runs", "ok",
            "ok%", "tries", "replans", "viol", "first ms", "total ms", "prompt", "compl", "cached",
            cost ? "     cost" : "");
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tasks"))
        row(out, str(t, "task"), t, cost);
    row(out, "overall", overall, cost);
}

/* Text for HTML: the five characters that matter escaped. */
static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

#define BAR_W 36
#define CHART_LEFT 190
#define CHART_W 300

/* One horizontal bar chart: a bar per task of KEY scaled to MAX. */
static void chart(FILE *f, const cJSON *doc, const char *title, const char *key, double scale,
                  double max, const char *unit, const char *colour)
{
    int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "tasks"));
    fprintf(f, "<h2>");
    html_text(f, title);
    fprintf(f, "</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n",
            CHART_LEFT + CHART_W + 110, n * BAR_W / 2 + 20);
    int i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tasks"))
    {
        double v = num(t, key) * scale;
        int y = i++ * BAR_W / 2 + 4;
        double w = isnan(v) || max <= 0 ? 0 : fmin(v / max, 1.0) * CHART_W;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">", CHART_LEFT - 6,
                y + 12);
        html_text(f, str(t, "task"));
        fprintf(f,
                "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">",
                CHART_LEFT, y, w, colour, CHART_LEFT + w + 4, y + 12);
        if (isnan(v))
            fputs("-", f);
        else
            fprintf(f, "%.0f %s", v, unit);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

static double max_of(const cJSON *doc, const char *key)
{
    double m = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tasks"))
    {
        double v = num(t, key);
        if (!isnan(v) && v > m) m = v;
    }
    return m;
}

static void html_row(FILE *f, const char *name, const cJSON *e)
{
    const char *keys[] = {
        "runs",          "success",           "success_rate",           "tries_mean",
        "replans_mean",  "violations",        "first_action_ms_median", "total_ms_median",
        "prompt_tokens", "completion_tokens", "cached_tokens",          "cost"};
    fputs("<tr><td>", f);
    html_text(f, name);
    fputs("</td>", f);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        double v = num(e, keys[i]);
        if (isnan(v))
            fputs("<td>-</td>", f);
        else if (strcmp(keys[i], "success_rate") == 0)
            fprintf(f, "<td>%.0f %%</td>", 100 * v);
        else if (strcmp(keys[i], "cost") == 0)
            fprintf(f, "<td>%.4f</td>", v);
        else if (v != floor(v))
            fprintf(f, "<td>%.2f</td>", v);
        else
            fprintf(f, "<td>%.0f</td>", v);
    }
    fputs("</tr>\n", f);
}

int evalreport_html(const char *path, const cJSON *doc, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) return errmsg_set(err, errlen, "%s: %s", path, strerror(errno));
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>aloft eval: ", f);
    html_text(f, str(doc, "model"));
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
          "collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
          "td:first-child{text-align:left}</style></head><body>\n<h1>aloft eval: ",
          f);
    html_text(f, str(doc, "model"));
    fputs("</h1>\n<p>LLM at ", f);
    html_text(f, str(doc, "llm_url"));
    fprintf(f, ", %.0f repeat(s) per task setup.</p>\n", num(doc, "repeat"));
    chart(f, doc, "Success rate per task", "success_rate", 100, 100, "%", "#2a7");
    chart(f, doc, "Median first-action time per task", "first_action_ms_median", 1,
          max_of(doc, "first_action_ms_median"), "ms", "#37c");
    fputs("<h2>Scores</h2>\n<table><tr><th>task</th><th>runs</th><th>success</th>"
          "<th>success rate</th><th>tries</th><th>replans</th><th>violations</th>"
          "<th>first action ms</th><th>total ms</th><th>prompt tokens</th>"
          "<th>completion tokens</th><th>cached tokens</th><th>cost</th></tr>\n",
          f);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tasks"))
        html_row(f, str(t, "task"), t);
    html_row(f, "overall", cJSON_GetObjectItemCaseSensitive(doc, "overall"));
    fputs("</table>\n</body></html>\n", f);
    if (ferror(f) | (fclose(f) != 0)) return errmsg_set(err, errlen, "%s: write failed", path);
    return 0;
}

static const cJSON *task_named(const cJSON *doc, const char *name)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
                              doc, "tasks")) if (strcmp(str(t, "task"), name) == 0) return t;
    return NULL;
}

static void compare_row(FILE *out, const char *name, const cJSON *a, const cJSON *b)
{
    fprintf(out, "%-22.22s", name);
    const char *keys[] = {"success_rate", "first_action_ms_median", "prompt_tokens",
                          "completion_tokens"};
    double scale[] = {100, 1, 1, 1};
    for (int i = 0; i < 4; i++) {
        cell(out, 8, 0, a ? scale[i] * num(a, keys[i]) : NAN);
        cell(out, 8, 0, b ? scale[i] * num(b, keys[i]) : NAN);
    }
    fputc('\n', out);
}

void evalreport_compare(FILE *out, const cJSON *a, const char *name_a, const cJSON *b,
                        const char *name_b)
{
    fprintf(out, "A: %s (model %s)\nB: %s (model %s)\n", name_a, str(a, "model"), name_b,
            str(b, "model"));
    fprintf(out, "%-22s %8s %8s %8s %8s %8s %8s %8s %8s\n", "task", "A ok%", "B ok%", "A first",
            "B first", "A prompt", "B prompt", "A compl", "B compl");
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(a, "tasks"))
        compare_row(out, str(t, "task"), t, task_named(b, str(t, "task")));
    cJSON_ArrayForEach(
        t, cJSON_GetObjectItemCaseSensitive(b, "tasks")) if (!task_named(a, str(t, "task")))
        compare_row(out, str(t, "task"), NULL, t);
    compare_row(out, "overall", cJSON_GetObjectItemCaseSensitive(a, "overall"),
                cJSON_GetObjectItemCaseSensitive(b, "overall"));
}
