/*
 * The edit distance behind "did you mean ...?" hints (an unknown option,
 * an unknown skill): the fewest one-character inserts, deletes and
 * replacements that turn one name into another.
 */
#ifndef ALOFT_EDITDIST_H
#define ALOFT_EDITDIST_H

#include <stdbool.h>
#include <stddef.h>

/* B counts up to this many characters; the rest of it is not compared. */
#define EDITDIST_MAX 64

/* The edit distance from the NA bytes of A to the NB bytes of B (cut to
 * EDITDIST_MAX); letters compare without case when FOLD. */
int editdist(const char *a, size_t na, const char *b, size_t nb, bool fold);

#endif
