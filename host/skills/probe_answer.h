/*
 * What a probe's answer becomes (SPEC §4 and §5: "coerced value"): the one
 * rule, used by the probe skill for plans, scripts and skill files alike.
 *
 *   - surrounding white space is dropped, then one pair of matching quotes
 *     ('5' or "True": LLMs often quote their answer);
 *   - True and False (exactly) become booleans;
 *   - a decimal numeral (optional sign, digits, optional fraction: 5, -2,
 *     +0.25) becomes a number, an integer when it has no fraction and fits;
 *     hex (0x10), exponents (1e3), inf and nan stay text, as in TypeFly;
 *   - anything else is the text, without its white space and quotes.
 */
#ifndef ALOFT_SKILLS_PROBE_ANSWER_H
#define ALOFT_SKILLS_PROBE_ANSWER_H

#include <lua.h>
#include <stddef.h>

/* Pushes ANSWER (LEN bytes) coerced as above onto L's stack. */
void probe_answer_push(lua_State *L, const char *answer, size_t len);

#endif
