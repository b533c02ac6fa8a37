/*
 * What a probe's answer becomes (probe_answer.h).
 */
#include "skills/probe_answer.h"

#include <stdbool.h>
#include <string.h>

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Optional sign, one or more digits, optionally '.' and one or more digits. */
static bool decimal_numeral(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) i++;
    size_t start = i;
    while (i < len && is_digit(s[i]))
        i++;
    if (i == start) return false;
    if (i < len && s[i] == '.') {
        size_t frac = ++i;
        while (i < len && is_digit(s[i]))
            i++;
        if (i == frac) return false;
    }
    return i == len;
}

void probe_answer_push(lua_State *L, const char *answer, size_t len)
{
    while (len && is_space(*answer))
        answer++, len--;
    while (len && is_space(answer[len - 1]))
        len--;
    if (len >= 2 && (answer[0] == '\'' || answer[0] == '"') && answer[len - 1] == answer[0]) {
        answer++;
        len -= 2;
    }
    if (len == 4 && memcmp(answer, "True", 4) == 0) {
        lua_pushboolean(L, 1);
        return;
    }
    if (len == 5 && memcmp(answer, "False", 5) == 0) {
        lua_pushboolean(L, 0);
        return;
    }
    lua_pushlstring(L, answer, len);
    /* Lua reads a decimal numeral as TypeFly does: an integer when it has no
     * fraction and fits, else a float. */
    if (decimal_numeral(answer, len) && lua_stringtonumber(L, lua_tostring(L, -1)))
        lua_remove(L, -2);
}
