/* The edit distance of hints: see editdist.h. */
#include "editdist.h"

#include <ctype.h>

static bool same(char x, char y, bool fold)
{
    return fold ? tolower((unsigned char)x) == tolower((unsigned char)y) : x == y;
}

int editdist(const char *a, size_t na, const char *b, size_t nb, bool fold)
{
    /* One row of the Levenshtein table, B along it. */
    int row[EDITDIST_MAX + 1];
    if (nb > EDITDIST_MAX) nb = EDITDIST_MAX;
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int best = diag + !same(a[i - 1], b[j - 1], fold);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}
