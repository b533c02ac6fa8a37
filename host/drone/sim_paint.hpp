// The simulated view painted with OpenCV, for the C++ files that show it:
// take_picture's PNG (sim_picture.cpp) and the web UI's camera
// (web/web_frame.cpp). A sky/floor background and each detection as a box
// filled with its colour, larger boxes first so that things standing on
// furniture (the usual nesting in a room) stay visible on top of it.
#ifndef ALOFT_DRONE_SIM_PAINT_HPP
#define ALOFT_DRONE_SIM_PAINT_HPP

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

extern "C" {
#include "vision/objects.h"
}

// The fill of a colour name (BGR); a neutral grey for names not listed.
inline cv::Scalar sim_paint_color(const char *name)
{
    static const struct {
        const char *name;
        unsigned char b, g, r;
    } colors[] = {
        {"red", 40, 40, 210},     {"green", 60, 170, 60},   {"blue", 200, 90, 40},
        {"yellow", 40, 220, 240}, {"orange", 30, 140, 250}, {"purple", 150, 60, 130},
        {"pink", 190, 150, 250},  {"brown", 40, 80, 130},   {"black", 30, 30, 30},
        {"white", 245, 245, 245}, {"gray", 140, 140, 140},  {"grey", 140, 140, 140},
    };
    for (const auto &c : colors)
        if (std::strcmp(c.name, name) == 0) return cv::Scalar(c.b, c.g, c.r);
    return cv::Scalar(160, 150, 140);
}

// Object O's box in pixels of a WIDTH x HEIGHT image (at least 1x1).
inline cv::Rect sim_paint_box(const vision_object &o, int width, int height)
{
    return cv::Rect(int((o.x - o.w / 2) * width), int((o.y - o.h / 2) * height),
                    std::max(1, int(o.w * width)), std::max(1, int(o.h * height)));
}

// A WIDTH x HEIGHT view of the N objects OBJS; returns the painting order
// (largest box first) for callers that draw more over each box.
inline std::vector<int> sim_paint_view(cv::Mat &img, int width, int height,
                                       const vision_object *objs, int n)
{
    img.create(height, width, CV_8UC3);
    img(cv::Rect(0, 0, width, height / 2)).setTo(cv::Scalar(235, 215, 190));
    img(cv::Rect(0, height / 2, width, height - height / 2)).setTo(cv::Scalar(150, 170, 180));
    std::vector<int> order(n);
    for (int i = 0; i < n; i++)
        order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return objs[a].w * objs[a].h > objs[b].w * objs[b].h; });
    for (int i : order)
        cv::rectangle(img, sim_paint_box(objs[i], width, height), sim_paint_color(objs[i].color),
                      cv::FILLED);
    return order;
}

#endif
