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

static const builtin_spec builtins[] = {
    {"move_forward", NULL, skill_move_forward, "distance", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "fly forward by distance cm"},
    {"move_backward", NULL, skill_move_backward, "distance", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "fly backward by distance cm"},
    {"move_left", NULL, skill_move_left, "distance", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "fly left by distance cm"},
    {"move_right", NULL, skill_move_right, "distance", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "fly right by distance cm"},
    {"move_up", NULL, skill_move_up, "distance", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "climb by distance cm"},
    {"move_down", NULL, skill_move_down, "distance", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "descend by distance cm"},
    {"turn_cw", NULL, skill_turn_cw, "degrees", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "rotate clockwise (right) by degrees"},
    {"turn_ccw", NULL, skill_turn_ccw, "degrees", SKILL_T_INT, SKILL_T_BOOL, SKILL_MOVES,
     "rotate counter-clockwise (left) by degrees"},
    {"delay", NULL, skill_delay, "milliseconds", SKILL_T_INT, SKILL_T_BOOL, 0,
     "hover in place for milliseconds"},
    {"is_visible", NULL, skill_is_visible, "object_name", SKILL_T_STR, SKILL_T_BOOL, SKILL_SEES,
     "True if the object is in the current view"},
    {"object_x", NULL, skill_object_x, "object_name", SKILL_T_STR, SKILL_T_FLOAT, SKILL_SEES,
     "horizontal centre of the object in the view, 0 (left) to 1 (right); False if unseen"},
    {"object_y", NULL, skill_object_y, "object_name", SKILL_T_STR, SKILL_T_FLOAT, SKILL_SEES,
     "vertical centre of the object in the view, 0 (top) to 1 (bottom); False if unseen"},
    {"object_width", NULL, skill_object_width, "object_name", SKILL_T_STR, SKILL_T_FLOAT,
     SKILL_SEES, "width of the object as a fraction of the view; False if unseen"},
    {"object_height", NULL, skill_object_height, "object_name", SKILL_T_STR, SKILL_T_FLOAT,
     SKILL_SEES, "height of the object as a fraction of the view; False if unseen"},
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
