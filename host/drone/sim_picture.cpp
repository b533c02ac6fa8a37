// Pictures of the simulated view: the detections drawn as filled, labelled
// boxes over a sky/floor background, written as PNG with OpenCV.
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
#include "drone/sim.h"
}

namespace
{

struct named_color {
    const char *name;
    unsigned char b, g, r;
};

const named_color colors[] = {
    {"red", 40, 40, 210},     {"green", 60, 170, 60},   {"blue", 200, 90, 40},
    {"yellow", 40, 220, 240}, {"orange", 30, 140, 250}, {"purple", 150, 60, 130},
    {"pink", 190, 150, 250},  {"brown", 40, 80, 130},   {"black", 30, 30, 30},
    {"white", 245, 245, 245}, {"gray", 140, 140, 140},  {"grey", 140, 140, 140},
};

cv::Scalar color_of(const char *name)
{
    for (const named_color &c : colors)
        if (std::strcmp(c.name, name) == 0) return cv::Scalar(c.b, c.g, c.r);
    return cv::Scalar(160, 150, 140);
}

} // namespace

extern "C" int sim_picture_write(const char *path, int width, int height, const vision_object *objs,
                                 int n, char *err, size_t errlen)
{
    try {
        cv::Mat img(height, width, CV_8UC3);
        img(cv::Rect(0, 0, width, height / 2)).setTo(cv::Scalar(235, 215, 190));
        img(cv::Rect(0, height / 2, width, height - height / 2)).setTo(cv::Scalar(150, 170, 180));
        // Larger boxes first: things standing on furniture (the usual
        // nesting in a room) stay visible on top of it.
        std::vector<int> order(n);
        for (int i = 0; i < n; i++)
            order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](int a, int b) { return objs[a].w * objs[a].h > objs[b].w * objs[b].h; });
        for (int i : order) {
            const vision_object &o = objs[i];
            cv::Rect r(int((o.x - o.w / 2) * width), int((o.y - o.h / 2) * height),
                       std::max(1, int(o.w * width)), std::max(1, int(o.h * height)));
            cv::rectangle(img, r, color_of(o.color), cv::FILLED);
            cv::rectangle(img, r, cv::Scalar(20, 20, 20), 2);
            cv::putText(img, o.name, cv::Point(r.x + 3, std::max(14, r.y - 4)),
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
