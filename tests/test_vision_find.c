/*
 * The object a skill argument names (vision_find): an instance id, a class
 * (the largest of it), ' ' and '_' alike ("sports ball" is sports_ball), and
 * TypeFly 2024's x selector ("apple[0.3]": the apple nearest x 0.3).
 */
#include "vision/objects.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static vision_object obj(const char *name, const char *cls, float x, float w)
{
    vision_object o;
    memset(&o, 0, sizeof o);
    snprintf(o.name, sizeof o.name, "%s", name);
    snprintf(o.cls, sizeof o.cls, "%s", cls);
    o.x = x;
    o.y = 0.5f;
    o.w = w;
    o.h = w;
    return o;
}

static void expect(const vision_object *objs, int n, const char *arg, const char *want)
{
    const vision_object *o = vision_find(objs, n, arg);
    const char *got = o ? o->name : "(none)";
    CHECK(strcmp(got, want) == 0, "vision_find '%s': got %s, want %s", arg, got, want);
}

int main(void)
{
    vision_object v[] = {
        obj("apple_1", "apple", 0.30f, 0.10f),
        obj("apple_2", "apple", 0.52f, 0.20f),
        obj("apple_3", "apple", 0.90f, 0.05f),
        obj("sports_ball_1", "sports_ball", 0.5f, 0.1f),
        obj("teddy bear_1", "teddy bear", 0.7f, 0.1f),
    };
    int n = (int)(sizeof v / sizeof v[0]);
    expect(v, n, "apple_3", "apple_3");
    expect(v, n, "apple", "apple_2"); /* the largest */
    expect(v, n, "pear", "(none)");
    /* ' ' and '_' alike, both ways */
    expect(v, n, "sports ball", "sports_ball_1");
    expect(v, n, "sports_ball", "sports_ball_1");
    expect(v, n, "sports ball_1", "sports_ball_1");
    expect(v, n, "teddy_bear", "teddy bear_1");
    expect(v, n, "sports  ball", "(none)");
    expect(v, n, "sportsball", "(none)");
    /* the x selector: nearest x, within the class */
    expect(v, n, "apple[0.3]", "apple_1");
    expect(v, n, "apple[0.52]", "apple_2");
    expect(v, n, "apple[0.8]", "apple_3");
    expect(v, n, "apple[0]", "apple_1");
    expect(v, n, "apple[1]", "apple_3");
    expect(v, n, "sports ball[0.1]", "sports_ball_1");
    expect(v, n, "pear[0.5]", "(none)");
    /* not a selector: no match rather than a guess */
    expect(v, n, "apple[1.5]", "(none)");
    expect(v, n, "apple[-0.1]", "(none)");
    expect(v, n, "apple[x]", "(none)");
    expect(v, n, "apple[]", "(none)");
    expect(v, n, "apple[nan]", "(none)");
    expect(v, n, "[0.5]", "(none)");
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
