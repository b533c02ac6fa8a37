/*
 * The world's camera for a flight (world.h): which eyes a mission gets,
 * opened before a real drone takes off, and the counts of its frames for
 * the run report (SPEC §2 and §11: "frames").
 */
#include "mission/world.h"

#include "drone/constraints.h"
#include "errmsg.h"
#include "vision/cvmod.h"
#include "vision/pipeline.h"

#include <stdio.h>
#include <string.h>

int mission_world_open_eyes(mission_world *w, const vision_options *vision,
                            const tello_config *tello, FILE *progress, char *err, size_t errlen)
{
    vision_options vo;
    if (vision)
        vo = *vision;
    else
        vision_options_init(&vo);
    bool detector = vo.det.kind != VISION_DETECTOR_SIM;
    if (tello && !tello->video) {
        snprintf(w->no_camera, sizeof w->no_camera,
                 "the Tello flies without its camera (--no-video): no picture to take");
        if (!vo.source) return 0;
    }
    char src[32];
    if (tello && !vo.source) {
        vo.source = tello_video_source(tello, src, sizeof src);
        /* No detector: the camera is there for pictures and the web UI,
         * and a mission that does not need it flies without it. */
        if (!detector) {
            char why[300];
            if (vision_cv_available(why, sizeof why) == 0 &&
                mission_world_camera(w, vo.source, vo.frame_timeout_ms, why, sizeof why) == 0) {
                if (progress) fprintf(progress, "camera: %s\n", vo.source);
                return 0;
            }
            snprintf(w->no_camera, sizeof w->no_camera, "%s", why);
            if (progress) fprintf(progress, "no camera: %s\n", why);
            return 0;
        }
    }
    if (!detector && !vo.source) return 0; /* the simulator's camera */
    if (mission_world_eyes(w, &vo, err, errlen)) return -1;
    if (progress) fprintf(progress, "vision: %s\n", vision_pipeline_describe(w->eyes));
    return 0;
}

void mission_world_camera_on(mission_world *w)
{
    if (!w->eyes || !w->drone) return;
    drone *d = constraints_is(w->drone) ? constraints_inner(w->drone) : w->drone;
    double ms = tello_streamon_ms(d);
    if (ms >= 0) vision_pipeline_set_start(w->eyes, ms);
}

bool mission_world_frames(mission_world *w, vision_stats *out)
{
    if (!w->eyes || !vision_pipeline_has_pixels(w->eyes)) return false;
    vision_pipeline_stats(w->eyes, out);
    return true;
}
