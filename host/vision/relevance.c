/*
 * Which objects of the view a task concerns: a word-level match of the
 * task against class names, a small synonym and category table, and
 * colours. Cheap and predictable on purpose: a relevant object that the
 * table misses is still listed while the view holds fewer than
 * VISION_PROMPT_CAP objects, and every object stays visible to the skills.
 */
#include "vision/relevance.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define WORD_MAX 32
#define TASK_WORDS 64

/* A task word and the classes it stands for ("|" separates them). */
typedef struct word_classes {
    const char *word;
    const char *classes;
} word_classes;

#define EDIBLE                                                                                     \
    "apple|banana|orange|lemon|pear|sandwich|broccoli|carrot|hot dog|pizza|donut|cake|grape|"      \
    "strawberry|bread"
#define DRINKABLE "bottle|cup|wine glass|can|mug|glass"
#define FURNITURE "chair|couch|bed|dining table|table|bench"
#define VEHICLE "car|bicycle|motorcycle|bus|truck|train|boat|airplane"

static const word_classes CATEGORIES[] = {
    {"eat", EDIBLE},
    {"food", EDIBLE},
    {"edible", EDIBLE},
    {"hungry", EDIBLE},
    {"fruit", EDIBLE},
    {"snack", EDIBLE},
    {"sweet", EDIBLE},
    {"meal", EDIBLE},
    {"drink", DRINKABLE},
    {"drinkable", DRINKABLE},
    {"thirsty", DRINKABLE},
    {"beverage", DRINKABLE},
    {"furniture", FURNITURE},
    {"sit", FURNITURE},
    {"seat", FURNITURE},
    {"vehicle", VEHICLE},
    {"people", "person"},
    {"someone", "person"},
    {"somebody", "person"},
    {"anyone", "person"},
    {"anybody", "person"},
    {"nobody", "person"},
    {"man", "person"},
    {"men", "person"},
    {"woman", "person"},
    {"women", "person"},
    {"human", "person"},
    {"child", "person"},
    {"me", "person"},
    {"cut", "scissors|knife"},
    {"cutting", "scissors|knife"},
    {"write", "pen|pencil"},
    {"writing", "pen|pencil"},
    {"sofa", "couch"},
    {"phone", "cell phone"},
    {"cellphone", "cell phone"},
    {"television", "tv"},
    {"computer", "laptop"},
    {"plant", "potted plant"},
    {"bike", "bicycle"},
    {"automobile", "car"},
};

/* Words that ask about every object in view. */
static const char *const EVERYTHING[] = {"item",    "object",  "everything", "anything",
                                         "thing",   "largest", "biggest",    "smallest",
                                         "closest", "nearest", "farthest"};

typedef struct task_words {
    char w[TASK_WORDS][WORD_MAX];
    int n;
} task_words;

/* The singular of a plural noun, roughly: "people" is left to the table. */
static void singular(char *w)
{
    size_t n = strlen(w);
    if (n > 4 && strcmp(w + n - 3, "ies") == 0)
        strcpy(w + n - 3, "y");
    else if (n > 4 && (strcmp(w + n - 4, "ches") == 0 || strcmp(w + n - 4, "shes") == 0 ||
                       strcmp(w + n - 3, "xes") == 0 || strcmp(w + n - 4, "sses") == 0))
        w[n - 2] = '\0';
    else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's')
        w[n - 1] = '\0';
}

/* Lower-case words of TASK, each also as its singular. */
static void split_words(const char *task, task_words *tw)
{
    tw->n = 0;
    for (const char *p = task; *p && tw->n + 2 <= TASK_WORDS;) {
        if (!isalpha((unsigned char)*p)) {
            p++;
            continue;
        }
        char w[WORD_MAX];
        size_t k = 0;
        for (; isalpha((unsigned char)*p); p++)
            if (k + 1 < sizeof w) w[k++] = (char)tolower((unsigned char)*p);
        w[k] = '\0';
        memcpy(tw->w[tw->n++], w, sizeof w);
        singular(w);
        if (strcmp(w, tw->w[tw->n - 1]) != 0) memcpy(tw->w[tw->n++], w, sizeof w);
    }
}

static bool has_word(const task_words *tw, const char *w)
{
    for (int i = 0; i < tw->n; i++)
        if (strcmp(tw->w[i], w) == 0) return true;
    return false;
}

/* Is CLS one of the "|"-separated CLASSES? */
static bool in_list(const char *classes, const char *cls)
{
    size_t n = strlen(cls);
    for (const char *p = classes; p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, cls, n) == 0) return true;
        p = bar ? bar + 1 : NULL;
    }
    return false;
}

static bool concerns(const vision_object *o, const task_words *tw)
{
    const char *last = strrchr(o->cls, ' ');
    if (has_word(tw, o->cls) || (last && has_word(tw, last + 1))) return true;
    if (o->color[0] && has_word(tw, o->color)) return true;
    for (size_t i = 0; i < sizeof CATEGORIES / sizeof *CATEGORIES; i++)
        if (has_word(tw, CATEGORIES[i].word) && in_list(CATEGORIES[i].classes, o->cls)) return true;
    for (size_t i = 0; i < sizeof EVERYTHING / sizeof *EVERYTHING; i++)
        if (has_word(tw, EVERYTHING[i])) return true;
    return false;
}

bool vision_relevant(const vision_object *o, const char *task)
{
    task_words tw;
    split_words(task ? task : "", &tw);
    return concerns(o, &tw);
}

int vision_relevant_first(vision_object *objs, int n, const char *task, int cap)
{
    task_words tw;
    split_words(task ? task : "", &tw);
    vision_object tmp[VISION_MAX_OBJECTS];
    if (n > VISION_MAX_OBJECTS) n = VISION_MAX_OBJECTS;
    bool rel[VISION_MAX_OBJECTS];
    int k = 0;
    for (int i = 0; i < n; i++)
        if ((rel[i] = concerns(&objs[i], &tw))) tmp[k++] = objs[i];
    int relevant = k;
    for (int i = 0; i < n; i++)
        if (!rel[i]) tmp[k++] = objs[i];
    if (n > 0) memcpy(objs, tmp, (size_t)n * sizeof *objs);
    return relevant > cap ? relevant : (n < cap ? n : cap);
}

size_t vision_describe_for_task(vision_object *objs, int n, const char *task, char *out,
                                size_t outlen)
{
    int keep = vision_relevant_first(objs, n, task, VISION_PROMPT_CAP);
    size_t used = vision_describe(objs, keep, out, outlen);
    if (keep >= n) return used;
    char more[64];
    int k = snprintf(more, sizeof more, "(%d more objects in view not listed)\n", n - keep);
    if (outlen && used + (size_t)k < outlen)
        memcpy(out + used, more, (size_t)k + 1);
    else if (outlen)
        out[outlen - 1] = '\0';
    return used + (size_t)k;
}
