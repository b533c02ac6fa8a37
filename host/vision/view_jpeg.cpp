// Camera frames for the web UI: the simulated view (vision/paint.h)
// with a detector's overlay, encoded as JPEG with OpenCV. Part of the OpenCV
// module (vision/cvmod.h).
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "vision/paint.h"
#include "vision/view.h"
}

namespace
{

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

extern "C" unsigned char *vision_view_jpeg(int width, int height, const vision_object *objs, int n,
                                           const char *caption, size_t *len, char *err,
                                           size_t errlen)
{
    try {
        if (width < 1 || height < 1 || width > 8192 || height > 8192) {
            std::snprintf(err, errlen, "frame size %dx%d is out of range", width, height);
            return nullptr;
        }
        n = std::clamp(n, 0, VISION_MAX_OBJECTS);
        cv::Mat img(height, width, CV_8UC3);
        paint_image view = {width, height, img.data};
        paint_view(&view, objs, n, nullptr);
        // The detections over it, as a detector's overlay.
        for (int i = 0; i < n; i++) {
            const vision_object &o = objs[i];
            paint_rect b = paint_box(&o, width, height);
            cv::Rect r(b.x, b.y, b.w, b.h);
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
