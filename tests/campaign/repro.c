/*
 * The campaign's reproducers: shrinking a failing case and the file that
 * replays it (see flight.h).
 */
#include "flight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The invariant's name: WHY up to its first ':'. */
static size_t name_len(const char *why)
{
    const char *colon = strchr(why, ':');
    return colon ? (size_t)(colon - why) : strlen(why);
}

static bool same_break(camp_env *env, const camp_case *c, const char *why)
{
    char got[4096];
    if (camp_check(env, c, got, sizeof got) != 1) return false;
    size_t n = name_len(why);
    /* A refused plan must stay refused for the same reason, not any. */
    if (strncmp(why, "accept:", 7) == 0) return strcmp(got, why) == 0;
    return name_len(got) == n && strncmp(got, why, n) == 0;
}

int camp_minimise(camp_env *env, camp_case *c, const char *why)
{
    int tries = 0;
    camp_text *p = &c->program;
    for (size_t size = p->len / 2 ? p->len / 2 : 1; size >= 1 && tries < 3000; size /= 2) {
        for (size_t pos = 0; pos + size <= p->len && tries < 3000;) {
            char *saved = malloc(size);
            if (!saved) abort();
            memcpy(saved, p->s + pos, size);
            memmove(p->s + pos, p->s + pos + size, p->len - pos - size + 1);
            p->len -= size;
            tries++;
            if (same_break(env, c, why)) {
                free(saved);
                continue; /* keep the cut, try the same place again */
            }
            memmove(p->s + pos + size, p->s + pos, p->len - pos + 1);
            memcpy(p->s + pos, saved, size);
            p->len += size;
            free(saved);
            pos += size;
        }
        if (size == 1) break;
    }
    return tries;
}

int camp_case_write(const camp_case *c, const char *why, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# aloft safety campaign reproducer; replay: test_campaign --replay FILE\n# ");
    for (const char *s = why; *s && *s != '\n'; s++)
        fputc(*s, f);
    fprintf(f,
            "\nseed %llu\nkind %s\nlimits %llu %zu %llu %zu\ntime_scale %g\nmax_loop %d\n"
            "verify %d\n",
            (unsigned long long)c->seed, c->lua ? "lua" : "plan",
            (unsigned long long)c->limits.max_instructions, c->limits.max_memory,
            (unsigned long long)c->limits.timeout_ms, c->limits.max_output, c->time_scale,
            c->max_loop, c->check_verify);
    fprintf(f, "scene %zu\n", c->scene.len);
    fwrite(c->scene.s, 1, c->scene.len, f);
    fprintf(f, "\nprogram %zu\n", c->program.len);
    fwrite(c->program.s ? c->program.s : "", 1, c->program.len, f);
    fputc('\n', f);
    return fclose(f);
}

static int read_block(FILE *f, const char *key, camp_text *t)
{
    char line[128];
    size_t n;
    char want[32];
    snprintf(want, sizeof want, "%s %%zu", key);
    if (!fgets(line, sizeof line, f) || sscanf(line, want, &n) != 1 || n > (64u << 20)) return -1;
    camp_text_free(t);
    t->s = malloc(n + 1);
    if (!t->s || fread(t->s, 1, n, f) != n) return -1;
    t->s[n] = '\0';
    t->len = t->cap = n;
    t->cap++;
    return fgetc(f) == '\n' ? 0 : -1;
}

int camp_case_read(camp_case *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f) return snprintf(err, errlen, "%s: cannot open", path), -1;
    char line[4096], kind[16];
    unsigned long long seed, instr, timeout;
    int verify = 0;
    int rc = -1;
    while (fgets(line, sizeof line, f) && line[0] == '#') {
    }
    if (sscanf(line, "seed %llu", &seed) == 1 && fgets(line, sizeof line, f) &&
        sscanf(line, "kind %15s", kind) == 1 && fgets(line, sizeof line, f) &&
        sscanf(line, "limits %llu %zu %llu %zu", &instr, &c->limits.max_memory, &timeout,
               &c->limits.max_output) == 4 &&
        fgets(line, sizeof line, f) && sscanf(line, "time_scale %lf", &c->time_scale) == 1 &&
        fgets(line, sizeof line, f) && sscanf(line, "max_loop %d", &c->max_loop) == 1 &&
        fgets(line, sizeof line, f) && sscanf(line, "verify %d", &verify) == 1 &&
        read_block(f, "scene", &c->scene) == 0 && read_block(f, "program", &c->program) == 0) {
        c->seed = seed;
        c->lua = strcmp(kind, "lua") == 0;
        c->limits.max_instructions = instr;
        c->limits.timeout_ms = timeout;
        c->check_verify = verify != 0;
        rc = 0;
    } else {
        snprintf(err, errlen, "%s: not a campaign reproducer", path);
    }
    fclose(f);
    return rc;
}
