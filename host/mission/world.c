/*
 * The mission world (world.h): every driver behind the one constraint check
 * before skills can see it.
 */
#include "mission/world.h"

#include "drone/heading.h"
#include "drone/constraints.h"
#include "drone/pictures.h"
#include "errmsg.h"
#include "vision/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrap(mission_world *w, drone *driver, char *err, size_t errlen)
{
    w->drone = constraints_wrap(driver, &w->scene->limits, &w->scene->start, err, errlen);
    if (!w->drone) {
        driver->ops->destroy(driver);
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    return 0;
}

int mission_world_sim(mission_world *w, const char *scene_path, const sim_options *opts, char *err,
                      size_t errlen)
{
    scene *sc = malloc(sizeof *sc);
    if (!sc) {
        memset(w, 0, sizeof *w);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = -1;
    if (scene_load(sc, scene_path, err, errlen) == 0)
        rc = mission_world_sim_scene(w, sc, opts, err, errlen);
    else
        memset(w, 0, sizeof *w);
    free(sc);
    return rc;
}

int mission_world_sim_scene(mission_world *w, const scene *sc, const sim_options *opts, char *err,
                            size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->scene = malloc(sizeof *w->scene);
    if (!w->scene) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *w->scene = *sc;
    drone *d = sim_open(w->scene, opts, err, errlen);
    if (!d) {
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    w->sim = d;
    if (wrap(w, d, err, errlen)) return -1;
    if (mission_world_launch(w, err, errlen)) {
        mission_world_close(w, false);
        return -1;
    }
    return 0;
}

int mission_world_wrap(mission_world *w, drone *driver, const char *scene_path, char *err,
                       size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->scene = malloc(sizeof *w->scene);
    if (!w->scene) {
        driver->ops->destroy(driver);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    scene_defaults(w->scene);
    if (scene_path && scene_load(w->scene, scene_path, err, errlen)) {
        driver->ops->destroy(driver);
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    /* A real drone's geofence is centred where it takes off. */
    drone_state st;
    if (driver->ops->get_state(driver, &st) == 0) w->scene->start = st.pose;
    return wrap(w, driver, err, errlen);
}

int mission_world_launch(mission_world *w, char *err, size_t errlen)
{
    drone *d = w->drone;
    if (d->ops->connect(d, err, errlen)) return -1;
    if (d->ops->takeoff(d, err, errlen)) {
        /* A takeoff cut short (cancelled, a lost reply) may have left the
         * drone up: then the world must land it when closed. */
        drone_state st;
        if (d->ops->get_state(d, &st) == 0 && st.flying) w->launched = true;
        return -1;
    }
    w->launched = true;
    return 0;
}

static int observe_sim(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return sim_observe(ud, out, max);
}

int mission_world_eyes(mission_world *w, const vision_options *vo, char *err, size_t errlen)
{
    vision_pipeline_close(w->eyes);
    w->eyes = vision_pipeline_open(vo, w->sim ? observe_sim : NULL, w->sim, err, errlen);
    return w->eyes ? 0 : -1;
}

int mission_world_camera(mission_world *w, const char *source, int frame_timeout_ms, char *err,
                         size_t errlen)
{
    vision_pipeline_close(w->eyes);
    w->eyes = vision_pipeline_open_camera(source, frame_timeout_ms, err, errlen);
    return w->eyes ? 0 : -1;
}

void mission_world_pictures(mission_world *w, const char *parent, int max_count, uint64_t max_bytes)
{
    if (!w->pics && !(w->pics = malloc(sizeof *w->pics))) return;
    pictures_init(w->pics, parent, max_count, max_bytes);
}

/* The eyes' frame as the mission's next picture (PNG, as the simulator's);
 * its size into *W and *H. */
static int picture_of_eyes(mission_world *w, char *path, size_t pathlen, int *fw, int *fh,
                           char *err, size_t errlen)
{
    vision_frame f = {0};
    if (vision_pipeline_picture(w->eyes, &f, err, errlen)) return -1;
    unsigned char *png;
    size_t len;
    *fw = f.w;
    *fh = f.h;
    int rc = pictures_png(f.bgr, f.w, f.h, f.stride, &png, &len, err, errlen);
    vision_frame_clear(&f);
    if (rc) return -1;
    if (!w->pics) mission_world_pictures(w, NULL, 0, 0);
    rc = w->pics ? pictures_save(w->pics, png, len, "png", path, pathlen, err, errlen)
                 : errmsg_set(err, errlen, "out of memory");
    free(png);
    return rc;
}

/* Notes a picture taken: its file, the camera, its size and the pose. */
static void log_picture(mission_world *w, const char *path, const char *camera, int fw, int fh)
{
    report_pictures_add(&w->pictures_log, path, camera, fw, fh, mission_world_pose(w));
}

int mission_world_take_picture(void *ud, char *path, size_t pathlen, char *err, size_t errlen)
{
    mission_world *w = ud;
    int fw = 0, fh = 0, rc;
    const char *camera;
    if (w->eyes && vision_pipeline_has_pixels(w->eyes)) {
        rc = picture_of_eyes(w, path, pathlen, &fw, &fh, err, errlen);
        camera = vision_pipeline_source(w->eyes);
    } else if (w->sim) {
        rc = sim_take_picture(w->sim, path, pathlen, err, errlen);
        camera = "sim";
        fw = w->scene->camera.width;
        fh = w->scene->camera.height;
    } else {
        return errmsg_set(err, errlen, "%s",
                          w->no_camera[0] ? w->no_camera : "no camera connected");
    }
    if (rc == 0) log_picture(w, path, camera, fw, fh);
    return rc;
}

void mission_world_take_pictures_log(mission_world *w, report_pictures *out)
{
    report_pictures_move(out, &w->pictures_log);
}

void mission_world_attach(mission_world *w, skill_ctx *ctx)
{
    ctx->drone = w->drone;
    if (w->eyes && vision_pipeline_detects(w->eyes)) {
        ctx->observe = vision_pipeline_observe;
        ctx->observe_ud = w->eyes;
    } else if (w->sim) {
        ctx->observe = observe_sim;
        ctx->observe_ud = w->sim;
    }
    ctx->picture = mission_world_take_picture;
    ctx->picture_ud = w;
}

drone_pose mission_world_pose(mission_world *w)
{
    drone_state st;
    memset(&st, 0, sizeof st);
    w->drone->ops->get_state(w->drone, &st);
    st.pose.yaw = heading_wrap(st.pose.yaw);
    return st.pose;
}

double mission_world_sim_s(mission_world *w)
{
    return w->sim ? sim_time_ms(w->sim) / 1000 : 0;
}

int mission_world_land(mission_world *w, char *err, size_t errlen)
{
    if (!w->drone || !w->launched) return 0;
    /* Landing after a cancel must work: the driver's calls would give up.
     * It must also end soon: the driver hurries (drone.hurry). */
    w->drone->hurry = w->cancel && atomic_load(w->cancel);
    w->drone->abort = NULL;
    w->drone->ops->hover(w->drone);
    w->launched = false;
    char why[512];
    if (w->drone->ops->land(w->drone, why, sizeof why) == 0) return 0;
    return errmsg_set(err, errlen, "landing failed: %s: the drone may still be flying", why);
}

void mission_world_close(mission_world *w, bool land)
{
    /* First: the sim detector looks through the simulator. */
    vision_pipeline_close(w->eyes);
    if (w->pics) pictures_close(w->pics);
    free(w->pics);
    report_pictures_free(&w->pictures_log);
    if (w->drone) {
        char err[512];
        if (land && w->launched) {
            mission_world_land(w, err, sizeof err);
        } else {
            w->drone->abort = NULL;
            w->drone->ops->hover(w->drone);
        }
        w->drone->ops->destroy(w->drone);
    }
    free(w->scene);
    memset(w, 0, sizeof *w);
}
