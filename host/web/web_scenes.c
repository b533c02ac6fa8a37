/* The scene files of a web server's drones, loaded once each (see
 * web_scenes.h). */
#include "web/web_scenes.h"

#include "drone/sim.h"
#include "errmsg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    web_scene pub;
    pthread_mutex_t cam_lock; /* the camera is placed, then looks */
    drone *camera;            /* or NULL */
    drone_pose start;
} entry;

struct web_scenes {
    pthread_mutex_t lock; /* guards the list */
    entry **list;
    int n, cap;
    uint64_t seed;
};

web_scenes *web_scenes_new(uint64_t seed)
{
    web_scenes *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->seed = seed;
    return s;
}

static void entry_free(entry *e)
{
    if (!e) return;
    if (e->camera) e->camera->ops->destroy(e->camera);
    pthread_mutex_destroy(&e->cam_lock);
    free(e->pub.path);
    free(e->pub.json);
    free(e);
}

void web_scenes_free(web_scenes *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++)
        entry_free(s->list[i]);
    free(s->list);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The whole text of PATH, or NULL. */
static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *text = NULL;
    long len = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
    if (len >= 0 && fseek(fp, 0, SEEK_SET) == 0 && (text = malloc((size_t)len + 1)))
        text[fread(text, 1, (size_t)len, fp)] = '\0';
    fclose(fp);
    return text;
}

static entry *load(const char *path, char *err, size_t errlen)
{
    entry *e = calloc(1, sizeof *e);
    if (!e) return errmsg_set(err, errlen, "out of memory"), NULL;
    pthread_mutex_init(&e->cam_lock, NULL);
    e->pub.path = strdup(path);
    if (!e->pub.path || scene_load(&e->pub.sc, path, err, errlen)) {
        if (!e->pub.path) errmsg_set(err, errlen, "out of memory");
        entry_free(e);
        return NULL;
    }
    e->pub.json = read_text(path);
    e->start = e->pub.sc.start;
    return e;
}

/* Gives E its camera: a simulator in the air at the scene's start. */
static int add_camera(web_scenes *s, entry *e, char *err, size_t errlen)
{
    sim_options so = {.time_scale = 0, .seed = s->seed, .picture_dir = NULL};
    char msg[512];
    drone *cam = sim_open(&e->pub.sc, &so, msg, sizeof msg);
    if (!cam || cam->ops->takeoff(cam, msg, sizeof msg)) {
        if (cam) cam->ops->destroy(cam);
        return errmsg_set(err, errlen, "%s", msg);
    }
    drone_state st;
    cam->ops->get_state(cam, &st);
    pthread_mutex_lock(&e->cam_lock);
    e->start = st.pose;
    e->camera = cam;
    pthread_mutex_unlock(&e->cam_lock);
    return 0;
}

const web_scene *web_scenes_get(web_scenes *s, const char *path, bool camera, char *err,
                                size_t errlen)
{
    pthread_mutex_lock(&s->lock);
    entry *e = NULL;
    for (int i = 0; i < s->n && !e; i++)
        if (strcmp(s->list[i]->pub.path, path) == 0) e = s->list[i];
    if (!e && s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        entry **grown = realloc(s->list, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&s->lock);
            return errmsg_set(err, errlen, "out of memory"), NULL;
        }
        s->list = grown;
        s->cap = cap;
    }
    if (!e && (e = load(path, err, errlen))) s->list[s->n++] = e;
    if (e && camera && !e->camera && add_camera(s, e, err, errlen)) e = NULL;
    pthread_mutex_unlock(&s->lock);
    return e ? &e->pub : NULL;
}

int web_scenes_count(const web_scenes *s)
{
    return s->n;
}

int web_scenes_view(web_scenes *s, const web_scene *sc, const drone_pose *pose, vision_object *out,
                    int max)
{
    (void)s;
    entry *e = (entry *)sc; /* pub is the entry's first member */
    int n = -1;
    pthread_mutex_lock(&e->cam_lock);
    if (e->camera) {
        sim_place(e->camera, pose);
        n = sim_observe(e->camera, out, max);
    }
    pthread_mutex_unlock(&e->cam_lock);
    return n;
}

drone_pose web_scenes_start(web_scenes *s, const web_scene *sc)
{
    (void)s;
    entry *e = (entry *)sc;
    pthread_mutex_lock(&e->cam_lock);
    drone_pose p = e->start;
    pthread_mutex_unlock(&e->cam_lock);
    return p;
}
