/*
 * Prompt templates: loading, checking and filling. See prompt.h.
 *
 * The table `templates` below is the single statement of which files exist,
 * which placeholders each may use and which it must use; the loader checks
 * every file against it, so a renderer can never meet a surprise.
 */
#include "llm/prompt.h"

#include "embedded.h"
#include "errmsg.h"
#include "textbuf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROMPT_FILE_MAX (256u * 1024u)

/* The placeholders of the planning family (planner, plan, retry, replan). */
#define PLANNING_VARS "skills minispec examples task scene memory "

enum { T_MINISPEC, T_EXAMPLES, T_PLANNER, T_PLAN, T_RETRY, T_REPLAN, T_PROBE, T_COUNT };

static const struct {
    const char *file;
    bool verbatim;        /* inserted as is, never scanned for placeholders */
    const char *allowed;  /* space-separated */
    const char *required; /* space-separated */
} templates[T_COUNT] = {
    [T_MINISPEC] = {"minispec.txt", true, "", ""},
    [T_EXAMPLES] = {"examples.txt", true, "", ""},
    [T_PLANNER] = {"planner.txt", false, PLANNING_VARS, "skills minispec"},
    [T_PLAN] = {"plan.txt", false, PLANNING_VARS, "task scene"},
    [T_RETRY] = {"retry.txt", false, PLANNING_VARS "plan diagnostics executed", "plan diagnostics"},
    [T_REPLAN] = {"replan.txt", false, PLANNING_VARS "plan executed reason",
                  "plan executed reason"},
    [T_PROBE] = {"probe.txt", false, "question scene", "question scene"},
};

struct prompt_set {
    char *text[T_COUNT];
    char *source[T_COUNT];
};

/* ---- placeholders ---------------------------------------------------------- */

/* Is the placeholder NAME (LEN bytes) a word of the space-separated LIST? */
static bool in_list(const char *list, const char *name, size_t len)
{
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == len && memcmp(p, name, len) == 0) return true;
        p += n;
    }
    return false;
}

/* The space-separated LIST as "{a}, {b} and {c}", for messages. */
static void braced_list(const char *list, char *out, size_t outlen)
{
    size_t total = 0, at = 0;
    for (const char *q = list; *q;) {
        size_t k = strcspn(q, " ");
        total += k != 0;
        q += k + (q[k] == ' ');
    }
    out[0] = '\0';
    size_t i = 0;
    for (const char *q = list; *q;) {
        size_t k = strcspn(q, " ");
        if (k) {
            const char *sep = i == 0 ? "" : i + 1 == total ? " and " : ", ";
            int w = snprintf(out + at, outlen - at, "%s{%.*s}", sep, (int)k, q);
            if (w < 0 || (size_t)w >= outlen - at) return;
            at += (size_t)w;
            i++;
        }
        q += k + (q[k] == ' ');
    }
}

/* Length of a placeholder name at S ("task}" -> 4), 0 if S does not start one. */
static size_t placeholder_len(const char *s)
{
    size_t n = 0;
    while (islower((unsigned char)s[n]) || s[n] == '_')
        n++;
    return (n > 0 && s[n] == '}') ? n : 0;
}

typedef struct var {
    const char *name;
    const char *value;
} var;

/* Walks template TEXT. With VARS, appends the filled text to OUT; without,
 * only checks it against template I's table entry. Returns 0 or -1. */
static int scan(const char *text, int i, const char *source, const var *vars, int nvars,
                textbuf *out, char *err, size_t errlen)
{
    bool seen_required[16] = {false};
    int line = 1;
    const char *p = text, *run = text;
    while (*p) {
        if (*p == '\n') line++;
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            if (out) {
                textbuf_add(out, run, (size_t)(p - run) + 1);
            }
            p += 2;
            run = p;
            continue;
        }
        size_t n = p[0] == '{' ? placeholder_len(p + 1) : 0;
        if (n == 0) {
            p++;
            continue;
        }
        const char *name = p + 1;
        if (!in_list(templates[i].allowed, name, n)) {
            char names[256];
            braced_list(templates[i].allowed, names, sizeof names);
            errmsg_set(err, errlen,
                       "%s:%d: unknown placeholder {%.*s}; this template may use %s "
                       "(write {{ for a literal brace)",
                       source, line, (int)n, name, names);
            return -1;
        }
        int r = 0;
        for (const char *q = templates[i].required; *q; r++) {
            while (*q == ' ')
                q++;
            size_t k = strcspn(q, " ");
            if (k == n && memcmp(q, name, n) == 0 && r < 16) seen_required[r] = true;
            q += k;
        }
        if (out) {
            textbuf_add(out, run, (size_t)(p - run));
            for (int v = 0; v < nvars; v++)
                if (strlen(vars[v].name) == n && memcmp(vars[v].name, name, n) == 0 &&
                    vars[v].value)
                    textbuf_adds(out, vars[v].value);
        }
        p += n + 2;
        run = p;
    }
    if (out) textbuf_add(out, run, (size_t)(p - run));
    int r = 0;
    for (const char *q = templates[i].required; *q; r++) {
        while (*q == ' ')
            q++;
        size_t k = strcspn(q, " ");
        if (k && !seen_required[r]) {
            errmsg_set(err, errlen, "%s: required placeholder {%.*s} is missing", source, (int)k,
                       q);
            return -1;
        }
        q += k;
    }
    return 0;
}

/* ---- loading ----------------------------------------------------------------- */

/* Reads DIR/FILE into *OUT. Returns 1 if read, 0 if there is no such file,
 * -1 on an error. */
static int read_user_file(const char *dir, const char *file, char **out, char **source, char *err,
                          size_t errlen)
{
    size_t plen = strlen(dir) + strlen(file) + 2;
    char *path = malloc(plen);
    if (!path) return -1;
    snprintf(path, plen, "%s/%s", dir, file);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        int e = errno;
        if (e == ENOENT) {
            free(path);
            return 0;
        }
        errmsg_set(err, errlen, "%s: %s", path, strerror(e));
        free(path);
        return -1;
    }
    textbuf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0 && b.len <= PROMPT_FILE_MAX)
        textbuf_add(&b, chunk, n);
    bool bad = ferror(fp);
    fclose(fp);
    if (bad || b.len > PROMPT_FILE_MAX || b.oom || (b.s && memchr(b.s, '\0', b.len))) {
        errmsg_set(err, errlen, "%s: %s", path,
                   bad ? "read error" : "not a text file of at most 256 KiB");
        textbuf_free(&b);
        free(path);
        return -1;
    }
    *out = textbuf_take(&b);
    *source = path;
    return 1;
}

int prompt_unknown_files(const char *dir, char *out, size_t outlen)
{
    out[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return 0;
    int count = 0;
    size_t at = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue; /* ., .. and hidden editor files */
        bool known = false;
        for (int i = 0; i < T_COUNT && !known; i++)
            known = strcmp(e->d_name, templates[i].file) == 0;
        if (known) continue;
        count++;
        int w = snprintf(out + at, outlen - at, "%s%s", at ? ", " : "", e->d_name);
        if (w > 0 && (size_t)w < outlen - at) at += (size_t)w;
    }
    closedir(d);
    return count;
}

void prompt_file_names(char *out, size_t outlen)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < T_COUNT; i++) {
        int w = snprintf(out + at, outlen - at, "%s%s", i ? ", " : "", templates[i].file);
        if (w < 0 || (size_t)w >= outlen - at) return;
        at += (size_t)w;
    }
}

void prompt_free(prompt_set *ps)
{
    if (!ps) return;
    for (int i = 0; i < T_COUNT; i++) {
        free(ps->text[i]);
        free(ps->source[i]);
    }
    free(ps);
}

prompt_set *prompt_load(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (dir && stat(dir, &st) < 0) {
        errmsg_set(err, errlen, "prompt directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    if (dir && !S_ISDIR(st.st_mode)) {
        errmsg_set(err, errlen, "prompt directory %s: not a directory", dir);
        return NULL;
    }
    prompt_set *ps = calloc(1, sizeof *ps);
    if (!ps) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    for (int i = 0; i < T_COUNT; i++) {
        int got = 0;
        if (dir)
            got = read_user_file(dir, templates[i].file, &ps->text[i], &ps->source[i], err, errlen);
        if (got < 0) goto fail;
        if (got == 0) {
            char path[64];
            snprintf(path, sizeof path, "prompts/%s", templates[i].file);
            const embedded_file *f = embedded_find(path);
            if (!f) {
                errmsg_set(err, errlen, "%s is missing from this build", path);
                goto fail;
            }
            ps->text[i] = strdup(f->data);
            ps->source[i] = strdup(path);
            if (!ps->text[i] || !ps->source[i]) {
                errmsg_set(err, errlen, "out of memory");
                goto fail;
            }
        }
        if (templates[i].verbatim) { /* the template around it decides the spacing */
            size_t n = strlen(ps->text[i]);
            while (n > 0 && isspace((unsigned char)ps->text[i][n - 1]))
                ps->text[i][--n] = '\0';
        } else if (scan(ps->text[i], i, ps->source[i], NULL, 0, NULL, err, errlen) < 0)
            goto fail;
    }
    return ps;
fail:
    prompt_free(ps);
    return NULL;
}

const char *prompt_source(const prompt_set *ps, const char *file)
{
    for (int i = 0; i < T_COUNT; i++)
        if (strcmp(templates[i].file, file) == 0) return ps->source[i];
    return NULL;
}

/* ---- rendering ---------------------------------------------------------------- */

void prompt_msgs_free(prompt_msgs *m)
{
    free(m->system);
    free(m->user);
    m->system = m->user = NULL;
}

int prompt_msgs_to_llm(const prompt_msgs *m, llm_message out[2])
{
    int n = 0;
    if (m->system) out[n++] = (llm_message){"system", m->system};
    out[n++] = (llm_message){"user", m->user ? m->user : ""};
    return n;
}

static const char *or_default(const char *s, const char *fallback)
{
    return s && *s ? s : fallback;
}

static char *render(const prompt_set *ps, int i, const var *vars, int nvars, char *err,
                    size_t errlen)
{
    textbuf b = {0};
    if (scan(ps->text[i], i, ps->source[i], vars, nvars, &b, err, errlen) < 0) {
        textbuf_free(&b);
        return NULL;
    }
    char *s = textbuf_take(&b);
    if (!s) errmsg_set(err, errlen, "out of memory");
    return s;
}

static const char *type_name(skill_type t)
{
    return t == SKILL_T_NONE ? "none" : skill_type_name(t);
}

char *prompt_skill_list(const skill_registry *reg)
{
    textbuf b = {0};
    for (size_t i = 0; i < registry_count(reg); i++) {
        const skill *s = registry_at(reg, i);
        textbuf_adds(&b, s->abbr);
        textbuf_adds(&b, " ");
        textbuf_adds(&b, s->name);
        textbuf_adds(&b, "(");
        for (int a = 0; a < s->nargs; a++) {
            bool opt = a >= s->min_args;
            if (a) textbuf_adds(&b, ", ");
            if (opt) textbuf_adds(&b, "[");
            textbuf_adds(&b, s->args[a].name);
            textbuf_adds(&b, ":");
            textbuf_adds(&b, type_name(s->args[a].type));
            if (opt) textbuf_adds(&b, "]");
        }
        textbuf_adds(&b, ")");
        if (s->returns != SKILL_T_NONE) {
            textbuf_adds(&b, " -> ");
            textbuf_adds(&b, type_name(s->returns));
        }
        if (*s->alias) {
            textbuf_adds(&b, " (also ");
            textbuf_adds(&b, *s->alias_abbr ? s->alias_abbr : s->alias);
            textbuf_adds(&b, ")");
        }
        if (*s->description) {
            textbuf_adds(&b, ": ");
            textbuf_adds(&b, s->description);
        }
        textbuf_adds(&b, "\n");
    }
    return textbuf_take(&b);
}

/* The system message shared by plan, retry and replan. */
static char *planner_system(const prompt_set *ps, const skill_registry *reg, char *err,
                            size_t errlen)
{
    char *skills = prompt_skill_list(reg);
    if (!skills) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    var vars[] = {
        {"skills", skills},
        {"minispec", ps->text[T_MINISPEC]},
        {"examples", ps->text[T_EXAMPLES]},
    };
    char *s = render(ps, T_PLANNER, vars, 3, err, errlen);
    free(skills);
    return s;
}

/* Fills template I as the user message after the planner system message.
 * VARS must leave room for the three placeholders added here (ten in all). */
static int planning(const prompt_set *ps, const skill_registry *reg, int i, var *vars, int nvars,
                    prompt_msgs *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->system = planner_system(ps, reg, err, errlen);
    if (!out->system) return -1;
    char *skills = NULL;
    /* the user message may use {skills} too, if someone moved it there */
    if (strstr(ps->text[i], "{skills}")) skills = prompt_skill_list(reg);
    vars[nvars++] = (var){"skills", skills};
    vars[nvars++] = (var){"minispec", ps->text[T_MINISPEC]};
    vars[nvars++] = (var){"examples", ps->text[T_EXAMPLES]};
    out->user = render(ps, i, vars, nvars, err, errlen);
    free(skills);
    if (!out->user) {
        prompt_msgs_free(out);
        return -1;
    }
    return 0;
}

#define NO_SCENE "(nothing in view)"
#define NOTHING "(none)"

int prompt_plan(const prompt_set *ps, const skill_registry *reg, const char *task,
                const char *scene, const char *memory, prompt_msgs *out, char *err, size_t errlen)
{
    var vars[10] = {
        {"task", or_default(task, NOTHING)},
        {"scene", or_default(scene, NO_SCENE)},
        {"memory", memory ? memory : ""},
    };
    return planning(ps, reg, T_PLAN, vars, 3, out, err, errlen);
}

int prompt_retry(const prompt_set *ps, const skill_registry *reg, const char *task,
                 const char *scene, const char *memory, const char *plan, const char *diagnostics,
                 const char *executed, prompt_msgs *out, char *err, size_t errlen)
{
    var vars[10] = {
        {"task", or_default(task, NOTHING)},
        {"scene", or_default(scene, NO_SCENE)},
        {"memory", memory ? memory : ""},
        {"plan", or_default(plan, "(empty)")},
        {"diagnostics", or_default(diagnostics, NOTHING)},
        {"executed", or_default(executed, "(nothing ran)")},
    };
    return planning(ps, reg, T_RETRY, vars, 6, out, err, errlen);
}

int prompt_replan(const prompt_set *ps, const skill_registry *reg, const char *task,
                  const char *scene, const char *memory, const char *plan, const char *executed,
                  const char *reason, prompt_msgs *out, char *err, size_t errlen)
{
    var vars[10] = {
        {"task", or_default(task, NOTHING)},
        {"scene", or_default(scene, NO_SCENE)},
        {"memory", memory ? memory : ""},
        {"plan", or_default(plan, "(empty)")},
        {"executed", or_default(executed, "(nothing ran)")},
        {"reason", or_default(reason, "the plan asked for a new plan")},
    };
    return planning(ps, reg, T_REPLAN, vars, 6, out, err, errlen);
}

int prompt_probe(const prompt_set *ps, const char *question, const char *scene, prompt_msgs *out,
                 char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    var vars[] = {
        {"question", or_default(question, NOTHING)},
        {"scene", or_default(scene, NO_SCENE)},
    };
    out->user = render(ps, T_PROBE, vars, 2, err, errlen);
    return out->user ? 0 : -1;
}
