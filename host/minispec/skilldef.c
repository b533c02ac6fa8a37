#include "minispec/minispec.h"

#include <stdio.h>

int minispec_compile_skill(const skill_registry *reg, skill *s, char *err, size_t errlen)
{
    (void)reg;
    snprintf(err, errlen, "%s: MiniSpec-defined skills are not supported yet", s->name);
    return -1;
}
