/*
 * OpenCV's image codecs, video capture, DNN and HOG behind the C interface
 * of vision/opencv.h, built into the OpenCV module (vision/cvmod.h). Every
 * entry point catches OpenCV's exceptions and turns them into a message, so
 * C callers never see one.
 */
#include "vision/opencv.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>
#include <opencv2/videoio.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <sys/stat.h>
#include <vector>

static void set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    if (errlen) snprintf(err, errlen, fmt, a, b);
}

/* Drops every "OpenCV(4.6.0) FILE:LINE: error: (-2:Unspecified error) "
 * from M: the source position of OpenCV's own code says nothing to a user. */
static void drop_positions(std::string &m)
{
    for (size_t at; (at = m.find("OpenCV(")) != std::string::npos;) {
        size_t err = m.find(": error: (", at);
        size_t close = err == std::string::npos ? err : m.find(") ", err);
        if (close == std::string::npos) break;
        m.erase(at, close + 2 - at);
    }
    for (size_t at; (at = m.find(" in function '")) != std::string::npos;) {
        size_t end = m.find('\'', at + 14);
        if (end == std::string::npos) break;
        m.erase(at, end + 1 - at);
    }
}

/* OpenCV's messages carry a source path and function, and the ONNX
 * importer's span lines that start with '>' (one of them empty): keep the
 * reason only, on one line. */
static std::string short_reason(const cv::Exception &e)
{
    std::string raw = e.err.empty() ? e.what() : e.err;
    std::string m;
    size_t start = 0;
    while (start <= raw.size()) {
        size_t nl = raw.find('\n', start);
        std::string line = raw.substr(start, nl == std::string::npos ? nl : nl - start);
        start = nl == std::string::npos ? raw.size() + 1 : nl + 1;
        size_t a = line.find_first_not_of("> \t\r");
        if (a == std::string::npos) continue;
        size_t b = line.find_last_not_of(" \t\r");
        if (!m.empty()) m += "; ";
        m += line.substr(a, b + 1 - a);
    }
    drop_positions(m);
    return m;
}

static bool is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* OpenCV logs its own view of every failure to stderr; the caller reports
 * the message we return instead. */
static void quiet_opencv(void)
{
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
}

/* Wraps a BGR frame without copying. */
static cv::Mat frame_mat(const vision_frame *f)
{
    return cv::Mat(f->h, f->w, CV_8UC3, f->bgr, (size_t)f->stride);
}

/* Makes OUT hold a copy of M (8-bit, 1, 3 or 4 channels). */
static int frame_from_mat(const cv::Mat &m, vision_frame *out)
{
    cv::Mat bgr;
    if (m.channels() == 3)
        bgr = m;
    else if (m.channels() == 1)
        cv::cvtColor(m, bgr, cv::COLOR_GRAY2BGR);
    else
        cv::cvtColor(m, bgr, cv::COLOR_BGRA2BGR);
    size_t need = (size_t)bgr.cols * 3 * (size_t)bgr.rows;
    size_t have = out->bgr ? (size_t)out->stride * (size_t)out->h : 0;
    if (!out->bgr || have < need) {
        free(out->bgr);
        out->bgr = (unsigned char *)malloc(need ? need : 1);
        if (!out->bgr) {
            out->w = out->h = out->stride = 0;
            return -1;
        }
    }
    out->w = bgr.cols;
    out->h = bgr.rows;
    out->stride = bgr.cols * 3;
    for (int y = 0; y < bgr.rows; y++)
        memcpy(out->bgr + (size_t)y * (size_t)out->stride, bgr.ptr(y), (size_t)out->stride);
    return 0;
}

extern "C" int vision_image_read(const char *path, vision_frame *out, char *err, size_t errlen)
{
    if (!is_regular_file(path)) {
        set_err(err, errlen, "%s: cannot read image file%s", path, "");
        return -1;
    }
    try {
        cv::Mat m = cv::imread(path, cv::IMREAD_COLOR);
        if (m.empty()) {
            set_err(err, errlen, "%s: not an image OpenCV can decode%s", path, "");
            return -1;
        }
        if (frame_from_mat(m, out) != 0) {
            set_err(err, errlen, "%s: out of memory%s", path, "");
            return -1;
        }
        return 0;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "%s: %s", path, short_reason(e).c_str());
        return -1;
    }
}

static unsigned char *encode_jpeg(const cv::Mat &m, int quality, size_t *len)
{
    std::vector<unsigned char> buf;
    std::vector<int> params = {cv::IMWRITE_JPEG_QUALITY, quality};
    if (!cv::imencode(".jpg", m, buf, params)) return NULL;
    unsigned char *out = (unsigned char *)malloc(buf.size() ? buf.size() : 1);
    if (!out) return NULL;
    memcpy(out, buf.data(), buf.size());
    *len = buf.size();
    return out;
}

extern "C" unsigned char *vision_jpeg_encode(const vision_frame *f, int quality, size_t *len)
{
    try {
        return encode_jpeg(frame_mat(f), quality, len);
    } catch (const cv::Exception &) {
        return NULL;
    }
}

extern "C" unsigned char *vision_jpeg_encode_marked(const vision_frame *f, const vision_mark *marks,
                                                    int n, int quality, size_t *len)
{
    try {
        cv::Mat m = frame_mat(f).clone();
        const cv::Scalar box(0, 255, 255), ink(0, 0, 0); /* yellow boxes, black text */
        int thick = f->w >= 640 ? 2 : 1;
        double font = f->w >= 640 ? 0.6 : 0.4;
        for (int i = 0; i < n; i++) {
            const vision_mark *k = &marks[i];
            cv::Point a((int)((k->x - k->w / 2) * f->w), (int)((k->y - k->h / 2) * f->h));
            cv::Point b((int)((k->x + k->w / 2) * f->w), (int)((k->y + k->h / 2) * f->h));
            cv::rectangle(m, a, b, box, thick);
            if (!k->label || !*k->label) continue;
            int base = 0;
            cv::Size t = cv::getTextSize(k->label, cv::FONT_HERSHEY_SIMPLEX, font, 1, &base);
            int top = a.y - t.height - 4 >= 0 ? a.y - t.height - 4 : a.y;
            cv::rectangle(m, cv::Rect(a.x, top, t.width + 4, t.height + 4), box, cv::FILLED);
            cv::putText(m, k->label, cv::Point(a.x + 2, top + t.height + 1),
                        cv::FONT_HERSHEY_SIMPLEX, font, ink, 1, cv::LINE_AA);
        }
        return encode_jpeg(m, quality, len);
    } catch (const cv::Exception &) {
        return NULL;
    }
}

extern "C" int vision_letterbox_frame(const vision_frame *f, int in_w, int in_h, float *blob,
                                      vision_letterbox *lb, char *err, size_t errlen)
{
    if (f->w <= 0 || f->h <= 0 || in_w <= 0 || in_h <= 0) {
        set_err(err, errlen, "empty frame or network input%s%s", "", "");
        return -1;
    }
    float sx = (float)in_w / (float)f->w, sy = (float)in_h / (float)f->h;
    float scale = sx < sy ? sx : sy;
    int nw = (int)(f->w * scale + 0.5f), nh = (int)(f->h * scale + 0.5f);
    if (nw < 1) nw = 1;
    if (nh < 1) nh = 1;
    if (nw > in_w) nw = in_w;
    if (nh > in_h) nh = in_h;
    lb->in_w = in_w;
    lb->in_h = in_h;
    lb->scale = scale;
    lb->pad_x = (in_w - nw) / 2;
    lb->pad_y = (in_h - nh) / 2;
    try {
        /* Per-thread buffers: fresh ones of this size come from mmap and
         * page-fault on every frame, which costs more than the work. */
        thread_local cv::Mat resized, bgr[3];
        cv::Mat small = frame_mat(f);
        if (nw != f->w || nh != f->h) {
            cv::resize(small, resized, cv::Size(nw, nh), 0, 0, cv::INTER_LINEAR);
            small = resized;
        }
        /* Planar RGB floats; the padding is the grey YOLO was trained with.
         * split + convertTo are vectorised, which a per-pixel loop is not. */
        cv::split(small, bgr);
        const cv::Scalar grey(114.0 / 255.0);
        cv::Rect image(lb->pad_x, lb->pad_y, nw, nh);
        for (int c = 0; c < 3; c++) {
            cv::Mat plane(in_h, in_w, CV_32F, blob + (size_t)c * (size_t)in_w * (size_t)in_h);
            if (image.y > 0) plane(cv::Rect(0, 0, in_w, image.y)).setTo(grey);
            if (image.y + nh < in_h)
                plane(cv::Rect(0, image.y + nh, in_w, in_h - image.y - nh)).setTo(grey);
            if (image.x > 0) plane(cv::Rect(0, image.y, image.x, nh)).setTo(grey);
            if (image.x + nw < in_w)
                plane(cv::Rect(image.x + nw, image.y, in_w - image.x - nw, nh)).setTo(grey);
            cv::Mat roi = plane(image);
            bgr[2 - c].convertTo(roi, CV_32F, 1.0 / 255.0);
        }
        return 0;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "letterbox: %s%s", short_reason(e).c_str(), "");
        return -1;
    }
}

struct vision_net {
    cv::dnn::Net net;
    std::vector<std::string> out_names;
    std::vector<cv::Mat> outs;
};

extern "C" vision_net *vision_net_load(const char *model, const char *weights, char *err,
                                       size_t errlen)
{
    if (!is_regular_file(model)) {
        set_err(err, errlen, "%s: model file not found%s", model, "");
        return NULL;
    }
    if (weights && !is_regular_file(weights)) {
        set_err(err, errlen, "%s: weights file not found%s", weights, "");
        return NULL;
    }
    quiet_opencv();
    vision_net *n = new (std::nothrow) vision_net;
    if (!n) {
        set_err(err, errlen, "out of memory%s%s", "", "");
        return NULL;
    }
    try {
        n->net =
            weights ? cv::dnn::readNetFromDarknet(model, weights) : cv::dnn::readNetFromONNX(model);
        if (n->net.empty()) {
            set_err(err, errlen, "%s: OpenCV loaded no layers from the model%s", model, "");
            delete n;
            return NULL;
        }
        n->net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        n->net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        n->out_names = n->net.getUnconnectedOutLayersNames();
        return n;
    } catch (const cv::Exception &e) {
        /* The ONNX exports of YOLOv8 and YOLO11 have nodes that OpenCV
         * before 4.7 cannot build: say what works instead. */
        std::string why = short_reason(e);
        if (!weights && why.find("Node [") != std::string::npos)
            why += "; YOLOv8 and YOLO11 ONNX exports need OpenCV 4.7 or newer (this is " CV_VERSION
                   "): use a YOLOv5 ONNX export at opset 12 or a Darknet tiny model (.cfg and "
                   ".weights)";
        set_err(err, errlen, "%s: cannot load model: %s", model, why.c_str());
        delete n;
        return NULL;
    }
}

extern "C" int vision_net_forward(vision_net *n, const float *blob, int in_w, int in_h,
                                  vision_tensor *outs, int max, char *err, size_t errlen)
{
    try {
        int sz[4] = {1, 3, in_h, in_w};
        cv::Mat input(4, sz, CV_32F, (void *)blob);
        n->net.setInput(input);
        n->outs.clear();
        n->net.forward(n->outs, n->out_names);
        int k = 0;
        for (size_t i = 0; i < n->outs.size() && k < max; i++) {
            cv::Mat &m = n->outs[i];
            if (m.type() != CV_32F) m.convertTo(m, CV_32F);
            if (!m.isContinuous()) m = m.clone();
            vision_tensor *t = &outs[k++];
            t->ndims = m.dims < 4 ? m.dims : 4;
            for (int d = 0; d < t->ndims; d++)
                t->dims[d] = m.size[d];
            t->data = (const float *)m.data;
        }
        return k;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "inference failed: %s%s", short_reason(e).c_str(), "");
        return -1;
    }
}

extern "C" void vision_net_free(vision_net *n)
{
    delete n;
}

extern "C" int vision_hog_detect(const vision_frame *f, vision_box *out, int max, char *err,
                                 size_t errlen)
{
    try {
        static const int max_side = 800; /* bigger frames only cost time */
        cv::Mat img = frame_mat(f);
        float k = 1.0f;
        int side = f->w > f->h ? f->w : f->h;
        if (side > max_side) {
            k = (float)max_side / (float)side;
            cv::resize(img, img, cv::Size(), k, k, cv::INTER_AREA);
        }
        cv::HOGDescriptor hog;
        hog.setSVMDetector(cv::HOGDescriptor::getDefaultPeopleDetector());
        std::vector<cv::Rect> rects;
        std::vector<double> weights;
        hog.detectMultiScale(img, rects, weights, 0, cv::Size(8, 8), cv::Size(16, 16), 1.05, 2.0);
        int n = 0;
        for (size_t i = 0; i < rects.size() && n < max; i++) {
            const cv::Rect &r = rects[i];
            vision_box *b = &out[n++];
            b->x0 = r.x / k;
            b->y0 = r.y / k;
            b->x1 = (r.x + r.width) / k;
            b->y1 = (r.y + r.height) / k;
            b->score = i < weights.size() ? (float)weights[i] : 1.0f;
            b->cls = 0;
        }
        return n;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "HOG: %s%s", short_reason(e).c_str(), "");
        return -1;
    }
}

struct vision_capture {
    cv::VideoCapture cap;
    cv::Mat buf;
};

/* "webcam:N" or a bare number is a camera index. */
static int camera_index(const char *uri)
{
    const char *p = strncmp(uri, "webcam:", 7) == 0 ? uri + 7 : uri;
    if (!*p) return -1;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q)) return -1;
    return atoi(p);
}

/* The FFmpeg options of a "pipe:FD" source: raw H.264 that starts with its
 * parameter sets (vision/h264_feed.h), so the shortest probe finds the
 * picture size and the first frame decodes at once (the default probe
 * reads five seconds of video first). OpenCV takes FFmpeg's options only
 * from this variable, read as the capture opens. */
#define PIPE_OPTIONS "input_format;h264|probesize;32|analyzeduration;0"
#define CAPTURE_OPTIONS "OPENCV_FFMPEG_CAPTURE_OPTIONS"

static bool open_ffmpeg(cv::VideoCapture &cap, const char *uri)
{
    if (strncmp(uri, "pipe:", 5) != 0) {
        /* A stream that stops must not block a read (and so closing the
         * pipeline) for FFmpeg's default 30 s. */
        std::vector<int> params = {cv::CAP_PROP_OPEN_TIMEOUT_MSEC, 10000,
                                   cv::CAP_PROP_READ_TIMEOUT_MSEC, 3000};
        return cap.open(uri, cv::CAP_FFMPEG, params);
    }
    /* The variable exists from start-up (vision/cvmod.c): replacing its
     * value never moves the environment's array under another thread's
     * getenv. One open at a time sees the pipe's options; a pipe has no
     * timeouts, as its writer ends it (end of file). */
    static std::mutex lock;
    std::lock_guard<std::mutex> hold(lock);
    const char *was = getenv(CAPTURE_OPTIONS);
    std::string saved = was ? was : "";
    setenv(CAPTURE_OPTIONS, PIPE_OPTIONS, 1);
    bool ok = false;
    try {
        ok = cap.open(uri, cv::CAP_FFMPEG);
    } catch (...) {
        setenv(CAPTURE_OPTIONS, saved.c_str(), 1);
        throw;
    }
    setenv(CAPTURE_OPTIONS, saved.c_str(), 1);
    return ok;
}

extern "C" vision_capture *vision_capture_open(const char *uri, char *err, size_t errlen)
{
    quiet_opencv();
    vision_capture *c = new (std::nothrow) vision_capture;
    if (!c) return NULL;
    int cam = camera_index(uri);
    bool stream = strstr(uri, "://") != NULL || strncmp(uri, "pipe:", 5) == 0;
    if (cam < 0 && !stream && !is_regular_file(uri)) {
        set_err(err, errlen, "%s: video file not found%s", uri, "");
        delete c;
        return NULL;
    }
    try {
        bool ok = cam >= 0 ? c->cap.open(cam) : open_ffmpeg(c->cap, uri);
        if (!ok || !c->cap.isOpened()) {
            set_err(err, errlen, "%s: cannot open %s", uri,
                    cam >= 0 ? "camera"
                    : stream ? "stream"
                             : "video (not a video file?)");
            delete c;
            return NULL;
        }
        return c;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "%s: %s", uri, short_reason(e).c_str());
        delete c;
        return NULL;
    }
}

extern "C" int vision_capture_read(vision_capture *c, vision_frame *out, char *err, size_t errlen)
{
    try {
        if (!c->cap.read(c->buf) || c->buf.empty()) return 0;
        if (frame_from_mat(c->buf, out) != 0) {
            set_err(err, errlen, "out of memory%s%s", "", "");
            return -1;
        }
        return 1;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "capture: %s%s", short_reason(e).c_str(), "");
        return -1;
    }
}

extern "C" double vision_capture_fps(vision_capture *c)
{
    try {
        double fps = c->cap.get(cv::CAP_PROP_FPS);
        return fps > 0 && fps < 1000 ? fps : 0;
    } catch (const cv::Exception &) {
        return 0;
    }
}

extern "C" void vision_capture_close(vision_capture *c)
{
    delete c;
}

extern "C" int vision_video_write(const char *path, const vision_frame *frames, int n, double fps,
                                  char *err, size_t errlen)
{
    if (n <= 0) {
        set_err(err, errlen, "%s: no frames to write%s", path, "");
        return -1;
    }
    quiet_opencv();
    try {
        size_t len = strlen(path);
        bool h264 = len > 5 && strcmp(path + len - 5, ".h264") == 0;
        int fourcc = h264 ? cv::VideoWriter::fourcc('H', '2', '6', '4')
                          : cv::VideoWriter::fourcc('M', 'J', 'P', 'G');
        cv::VideoWriter w(path, cv::CAP_FFMPEG, fourcc, fps, cv::Size(frames[0].w, frames[0].h));
        if (!w.isOpened()) {
            set_err(err, errlen, "%s: cannot write video%s", path, "");
            return -1;
        }
        for (int i = 0; i < n; i++)
            w.write(frame_mat(&frames[i]));
        return 0;
    } catch (const cv::Exception &e) {
        set_err(err, errlen, "%s: %s", path, short_reason(e).c_str());
        return -1;
    }
}
