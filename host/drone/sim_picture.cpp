// Pictures of the simulated view (sim_paint.hpp) with each box outlined and
// labelled, encoded as PNG with OpenCV (drone/pictures.c writes the file).
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "drone/sim.h"
}
#include "drone/sim_paint.hpp"

extern "C" int sim_picture_encode(int width, int height, const vision_object *objs, int n,
                                  unsigned char **data, size_t *len, char *err, size_t errlen)
{
    *data = nullptr;
    *len = 0;
    try {
        cv::Mat img;
        for (int i : sim_paint_view(img, width, height, objs, n)) {
            cv::Rect r = sim_paint_box(objs[i], width, height);
            cv::rectangle(img, r, cv::Scalar(20, 20, 20), 2);
            cv::putText(img, objs[i].name, cv::Point(r.x + 3, std::max(14, r.y - 4)),
                        cv::FONT_HERSHEY_SIMPLEX, 0.5, cv::Scalar(10, 10, 10), 1, cv::LINE_AA);
        }
        std::vector<uchar> png;
        if (!cv::imencode(".png", img, png) || png.empty()) {
            std::snprintf(err, errlen, "cannot encode the picture as PNG");
            return -1;
        }
        *data = static_cast<unsigned char *>(std::malloc(png.size()));
        if (!*data) {
            std::snprintf(err, errlen, "out of memory for a picture");
            return -1;
        }
        std::memcpy(*data, png.data(), png.size());
        *len = png.size();
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(err, errlen, "picture: %s", e.what());
        return -1;
    }
}
