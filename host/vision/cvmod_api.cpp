// The one exported symbol of aloft-opencv.so (vision/cvmod.h): the table of
// the module's functions, which are hidden from everything else.
extern "C" {
#include "vision/cvmod.h"
#include "vision/view.h"
}

extern "C" __attribute__((visibility("default"))) const vision_cv_api *aloft_opencv_api(void);

extern "C" const vision_cv_api *aloft_opencv_api(void)
{
    static const vision_cv_api api = {
        VISION_CV_ABI,      sizeof(vision_cv_api),     vision_image_read,
        vision_jpeg_encode, vision_jpeg_encode_marked, vision_letterbox_frame,
        vision_net_load,    vision_net_forward,        vision_net_free,
        vision_hog_detect,  vision_capture_open,       vision_capture_read,
        vision_capture_fps, vision_capture_close,      vision_video_write,
        vision_view_jpeg,
    };
    return &api;
}
