/*
 * What a probe's answer becomes (host/skills/probe_answer.h), at the edges
 * of each part of the rule: white space, quotes, True/False, decimal
 * numerals (and the hex, exponent, inf and nan forms that stay text).
 */
#include "skills/probe_answer.h"

#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

#include "check.h"

/* What ANSWER becomes, written as "bool:true", "int:5", "float:0.25" or
 * "str:<text>". */
static void coerce(lua_State *L, const char *answer, size_t len, char *out, size_t outlen)
{
    probe_answer_push(L, answer, len);
    if (lua_isboolean(L, -1))
        snprintf(out, outlen, "bool:%s", lua_toboolean(L, -1) ? "true" : "false");
    else if (lua_isinteger(L, -1))
        snprintf(out, outlen, "int:%lld", (long long)lua_tointeger(L, -1));
    else if (lua_type(L, -1) == LUA_TNUMBER)
        snprintf(out, outlen, "float:%.17g", lua_tonumber(L, -1));
    else
        snprintf(out, outlen, "str:%s", lua_tostring(L, -1));
    lua_pop(L, 1);
}

int main(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        /* True / False, exactly */
        {"True", "bool:true"},
        {"False", "bool:false"},
        {" \tTrue\n", "bool:true"},
        {"'True'", "bool:true"},
        {"\"False\"", "bool:false"},
        {"true", "str:true"},
        {"TRUE", "str:TRUE"},
        {"True.", "str:True."},
        {"'True\"", "str:'True\""},
        /* decimal numerals */
        {"5", "int:5"},
        {" 2 ", "int:2"},
        {"-5", "int:-5"},
        {"+5", "int:5"},
        {"0", "int:0"},
        {"0.25", "float:0.25"},
        {"-3.5", "float:-3.5"},
        {"'5'", "int:5"},
        {"\"4.5\"", "float:4.5"},
        {"99999999999999999999", "float:1e+20"},
        /* almost numerals: text */
        {"5.", "str:5."},
        {".5", "str:.5"},
        {"-", "str:-"},
        {"+", "str:+"},
        {"1 2", "str:1 2"},
        {"12abc", "str:12abc"},
        {"0x10", "str:0x10"},
        {"1e3", "str:1e3"},
        {"1E3", "str:1E3"},
        {"inf", "str:inf"},
        {"nan", "str:nan"},
        {"--5", "str:--5"},
        /* text, without white space and one pair of quotes */
        {"  red apple ", "str:red apple"},
        {"'red'", "str:red"},
        {"''", "str:"},
        {"'", "str:'"},
        {"\"", "str:\""},
        {"", "str:"},
        {"   ", "str:"},
        {"''5''", "str:'5'"},
    };
    lua_State *L = luaL_newstate();
    char got[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coerce(L, cases[i].in, strlen(cases[i].in), got, sizeof got);
        CHECK(strcmp(got, cases[i].want) == 0, "'%s' -> %s, want %s", cases[i].in, got,
              cases[i].want);
    }
    /* LEN bytes, not up to a NUL: an answer is a buffer. */
    coerce(L, "51", 1, got, sizeof got);
    CHECK(strcmp(got, "int:5") == 0, "first byte of \"51\" -> %s", got);
    CHECK(lua_gettop(L) == 0, "every value pushed was popped");
    lua_close(L);
    return failures ? 1 : 0;
}
