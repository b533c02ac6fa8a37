// Camera frames for the web UI, drawn and encoded with OpenCV.
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "web/web_frame.h"
}

namespace
{

struct named_color {
    const char *name;
    unsigned char b, g, r;
};

const named_color fills[] = {
    {"red", 60, 60, 200},     {"green", 80, 170, 80},   {"blue", 190, 110, 60},
    {"yellow", 70, 210, 230}, {"orange", 50, 150, 240}, {"purple", 150, 80, 140},
    {"pink", 190, 160, 240},  {"brown", 60, 90, 130},   {"black", 50, 50, 50},
    {"white", 235, 235, 235}, {"gray", 150, 150, 150},  {"grey", 150, 150, 150},
};

cv::Scalar fill_of(const char *name)
{
    for (const named_color &c : fills)
        if (std::strcmp(c.name, name) == 0) return cv::Scalar(c.b, c.g, c.r);
    return cv::Scalar(170, 160, 150);
}

cv::Rect box_of(const vision_object &o, int width, int height)
{
    return cv::Rect(int((o.x - o.w / 2) * width), int((o.y - o.h / 2) * height),
                    std::max(1, int(o.w * width)), std::max(1, int(o.h * height)));
}

// Text with a dark backing so that it reads on any fill.
void label(cv::Mat &img, const char *text, cv::Point at, cv::Scalar color)
{
    int base = 0;
    cv::Size sz = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, 0.45, 1, &base);
    at.x = std::clamp(at.x, 0, std::max(0, img.cols - sz.width - 4));
    at.y = std::clamp(at.y, sz.height + 4, img.rows - 2);
    cv::rectangle(img, cv::Rect(at.x, at.y - sz.height - 4, sz.width + 4, sz.height + base + 4),
                  cv::Scalar(25, 25, 25), cv::FILLED);
    cv::putText(img, text, cv::Point(at.x + 2, at.y - 2), cv::FONT_HERSHEY_SIMPLEX, 0.45, color, 1,
                cv::LINE_AA);
}

} // namespace

extern "C" unsigned char *web_frame_jpeg(int width, int height, const vision_object *objs, int n,
                                         const char *caption, size_t *len, char *err, size_t errlen)
{
    try {
        cv::Mat img(height, width, CV_8UC3);
        img(cv::Rect(0, 0, width, height / 2)).setTo(cv::Scalar(225, 205, 180));
        img(cv::Rect(0, height / 2, width, height - height / 2)).setTo(cv::Scalar(140, 160, 170));
        // The room: larger boxes first, so that things on furniture stay on top.
        std::vector<int> order(n);
        for (int i = 0; i < n; i++)
            order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](int a, int b) { return objs[a].w * objs[a].h > objs[b].w * objs[b].h; });
        for (int i : order)
            cv::rectangle(img, box_of(objs[i], width, height), fill_of(objs[i].color), cv::FILLED);
        // The detections over it, as a detector's overlay.
        for (int i = 0; i < n; i++) {
            const vision_object &o = objs[i];
            cv::Rect r = box_of(o, width, height);
            cv::rectangle(img, r, cv::Scalar(40, 230, 40), 2);
            char text[96];
            std::snprintf(text, sizeof text, "%s %.2f", o.name, double(o.conf));
            label(img, text, cv::Point(r.x, r.y), cv::Scalar(80, 255, 80));
        }
        if (caption && caption[0])
            label(img, caption, cv::Point(4, height - 4), cv::Scalar(255, 255, 255));
        std::vector<unsigned char> buf;
        if (!cv::imencode(".jpg", img, buf, {cv::IMWRITE_JPEG_QUALITY, 75})) {
            std::snprintf(err, errlen, "cannot encode the frame as JPEG");
            return nullptr;
        }
        unsigned char *out = static_cast<unsigned char *>(std::malloc(buf.size()));
        if (!out) {
            std::snprintf(err, errlen, "out of memory");
            return nullptr;
        }
        std::memcpy(out, buf.data(), buf.size());
        *len = buf.size();
        return out;
    } catch (const cv::Exception &e) {
        std::snprintf(err, errlen, "frame: %s", e.what());
        return nullptr;
    }
}
