/*
 * Object positions from camera views (sighting.h). The camera model is the
 * simulator's (drone/sim_camera.c): a level pinhole camera at the drone,
 * looking along its heading, forward (sin yaw, cos yaw), right (cos yaw,
 * -sin yaw); image x grows to the right, y downwards. The estimate inverts
 * that projection with the distance taken from the box's size.
 */
#include "mission/sighting.h"

#include <math.h>
#include <string.h>

/* The usual largest dimension of each class, cm (a person's height, a
 * banana's length, a table's width). */
static const struct {
    const char *cls;
    double size;
} sizes[] = {
    {"person", 170},  {"bicycle", 170},      {"car", 450},          {"motorcycle", 200},
    {"bus", 1200},    {"truck", 800},        {"traffic light", 80}, {"stop sign", 75},
    {"bench", 150},   {"bird", 25},          {"cat", 45},           {"dog", 70},
    {"horse", 240},   {"backpack", 45},      {"umbrella", 100},     {"handbag", 35},
    {"suitcase", 65}, {"bottle", 25},        {"wine glass", 18},    {"cup", 10},
    {"fork", 18},     {"knife", 22},         {"spoon", 16},         {"bowl", 16},
    {"banana", 20},   {"apple", 8},          {"sandwich", 12},      {"orange", 8},
    {"broccoli", 15}, {"carrot", 18},        {"pizza", 30},         {"donut", 10},
    {"cake", 20},     {"chair", 90},         {"couch", 200},        {"potted plant", 50},
    {"bed", 200},     {"dining table", 150}, {"table", 80},         {"toilet", 75},
    {"tv", 100},      {"laptop", 35},        {"mouse", 10},         {"remote", 18},
    {"keyboard", 45}, {"cell phone", 15},    {"microwave", 50},     {"oven", 75},
    {"sink", 55},     {"refrigerator", 180}, {"book", 25},          {"clock", 30},
    {"vase", 30},     {"scissors", 18},      {"teddy bear", 35},    {"toothbrush", 18},
    {"door", 200},    {"window", 120},       {"box", 40},           {"ball", 22},
    {"plant", 50},    {"lamp", 60},          {"shelf", 180},        {"desk", 120},
};

#define DEFAULT_SIZE_CM 50.0
#define EDGE 0.01 /* a box this close to the image border may be cut off */

double sighting_class_size_cm(const char *cls)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].cls, cls) == 0) return sizes[i].size;
    return DEFAULT_SIZE_CM;
}

bool sighting_locate(const drone_pose *pose, const scene_camera *cam, const vision_object *o,
                     double pos[3])
{
    if (!(o->h > 0.005) || !(o->w > 0) || cam->hfov <= 0 || cam->vfov <= 0) return false;
    if (o->x - o->w / 2 < EDGE || o->x + o->w / 2 > 1 - EDGE || o->y - o->h / 2 < EDGE ||
        o->y + o->h / 2 > 1 - EDGE)
        return false;
    double fx = 0.5 / tan(cam->hfov * M_PI / 360), fy = 0.5 / tan(cam->vfov * M_PI / 360);
    /* The sight line through the box centre, as tangents of its angles off
     * the heading: right and up. */
    double tx = (o->x - 0.5) / fx, ty = (0.5 - o->y) / fy;
    /* The box's extent as angles (a tangent's step shrinks by cos^2 of the
     * angle off axis); its larger one is the class's largest dimension
     * seen across the sight line, which gives the range. */
    double cx = 1 / (1 + tx * tx), cy = 1 / (1 + ty * ty);
    double angle = fmax(o->w / fx * cx, o->h / fy * cy);
    double range = sighting_class_size_cm(o->cls) / angle;
    double norm = sqrt(1 + tx * tx + ty * ty);
    double Z = range / norm; /* along the heading */
    double X = Z * tx;       /* to the right */
    double Y = Z * ty;       /* up */
    double rad = pose->yaw * M_PI / 180;
    pos[0] = pose->x + Z * sin(rad) + X * cos(rad);
    pos[1] = pose->y + Z * cos(rad) - X * sin(rad);
    pos[2] = pose->z + Y;
    return isfinite(pos[0]) && isfinite(pos[1]) && isfinite(pos[2]);
}
