// Pictures of the simulated view (sim_paint.hpp) with each box outlined and
// labelled, written as PNG with OpenCV.
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>

extern "C" {
#include "drone/sim.h"
}
#include "drone/sim_paint.hpp"

extern "C" int sim_picture_write(const char *path, int width, int height, const vision_object *objs,
                                 int n, char *err, size_t errlen)
{
    try {
        cv::Mat img;
        for (int i : sim_paint_view(img, width, height, objs, n)) {
            cv::Rect r = sim_paint_box(objs[i], width, height);
            cv::rectangle(img, r, cv::Scalar(20, 20, 20), 2);
            cv::putText(img, objs[i].name, cv::Point(r.x + 3, std::max(14, r.y - 4)),
                        cv::FONT_HERSHEY_SIMPLEX, 0.5, cv::Scalar(10, 10, 10), 1, cv::LINE_AA);
        }
        if (!cv::imwrite(path, img)) {
            std::snprintf(err, errlen, "cannot write picture %s", path);
            return -1;
        }
        return 0;
    } catch (const cv::Exception &e) {
        std::snprintf(err, errlen, "picture %s: %s", path, e.what());
        return -1;
    }
}
