/*
 * The low-level skills of SPEC §5. Their order matters: abbreviations are
 * assigned in registration order, and this order gives exactly TypeFly's
 * (turn_cw takes "tc" before turn_ccw, which then gets "tu").
 */
#include "skills/builtin.h"

#include <stdio.h>
#include <string.h>

typedef struct builtin_spec {
    const char *name, *alias;
    skill_fn fn;
    const char *arg; /* the one argument's name, or NULL */
    skill_type arg_type;
    skill_type returns;
    unsigned flags;
    const char *description;
} builtin_spec;

/* The families of skills that share their signature and effect: a motion
 * takes a whole number (cm or degrees) and returns whether it flew; a
 * sight looks up an object by name and returns a number of the view. */
#define MOTION(skill, arg_name, text)                                                              \
    {                                                                                              \
        .name = #skill, .fn = skill_##skill, .arg = arg_name, .arg_type = SKILL_T_INT,             \
        .returns = SKILL_T_BOOL, .flags = SKILL_MOVES, .description = text                         \
    }
#define SIGHT(skill, text)                                                                         \
    {                                                                                              \
        .name = #skill, .fn = skill_##skill, .arg = "object_name", .arg_type = SKILL_T_STR,        \
        .returns = SKILL_T_FLOAT, .flags = SKILL_SEES, .description = text                         \
    }

static const builtin_spec builtins[] = {
    MOTION(move_forward, "distance", "fly forward by distance cm"),
    MOTION(move_backward, "distance", "fly backward by distance cm"),
    MOTION(move_left, "distance", "fly left by distance cm"),
    MOTION(move_right, "distance", "fly right by distance cm"),
    MOTION(move_up, "distance", "climb by distance cm"),
    MOTION(move_down, "distance", "descend by distance cm"),
    MOTION(turn_cw, "degrees", "rotate clockwise (right) by degrees"),
    MOTION(turn_ccw, "degrees", "rotate counter-clockwise (left) by degrees"),
    {"delay", NULL, skill_delay, "milliseconds", SKILL_T_INT, SKILL_T_BOOL, 0,
     "hover in place for milliseconds"},
    {"is_visible", NULL, skill_is_visible, "object_name", SKILL_T_STR, SKILL_T_BOOL, SKILL_SEES,
     "True if the object is in the current view"},
    SIGHT(object_x,
          "horizontal centre of the object in the view, 0 (left) to 1 (right); False if unseen"),
    SIGHT(object_y,
          "vertical centre of the object in the view, 0 (top) to 1 (bottom); False if unseen"),
    SIGHT(object_width, "width of the object as a fraction of the view; False if unseen"),
    SIGHT(object_height, "height of the object as a fraction of the view; False if unseen"),
    {"log", NULL, skill_log, "text", SKILL_T_STR, SKILL_T_BOOL, 0,
     "say text to the user (answers to questions go here)"},
    {"take_picture", NULL, skill_take_picture, NULL, SKILL_T_NONE, SKILL_T_STR, SKILL_SEES,
     "save a picture of the current view; returns its path"},
    {"probe", "query", skill_probe, "question", SKILL_T_STR, SKILL_T_ANY, SKILL_ASKS,
     "ask the LLM a question about the current view; returns the answer"},
    {"replan", "re_plan", skill_replan, NULL, SKILL_T_NONE, SKILL_T_NONE, SKILL_CONTROL,
     "stop this plan and ask for a new one based on what is seen now"},
};

int builtin_register(skill_registry *reg, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        const builtin_spec *b = &builtins[i];
        skill s;
        memset(&s, 0, sizeof s);
        snprintf(s.name, sizeof s.name, "%s", b->name);
        if (b->alias) snprintf(s.alias, sizeof s.alias, "%s", b->alias);
        s.level = SKILL_LOW;
        s.fn = b->fn;
        s.returns = b->returns;
        s.flags = b->flags;
        s.builtin = true;
        snprintf(s.description, sizeof s.description, "%s", b->description);
        if (b->arg) {
            snprintf(s.args[0].name, sizeof s.args[0].name, "%s", b->arg);
            s.args[0].type = b->arg_type;
            s.nargs = s.min_args = 1;
        }
        if (registry_add(reg, &s, err, errlen)) return -1;
    }
    return 0;
}
