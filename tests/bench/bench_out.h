/*
 * Where a benchmark writes its numbers: `aloft bench` passes the path of a
 * JSON file as the program's only argument. Without one the benchmark just
 * prints its lines.
 */
#ifndef ALOFT_BENCH_OUT_H
#define ALOFT_BENCH_OUT_H

#include <stdio.h>
#include <stdlib.h>

/* The file for the JSON document (close it), or NULL when none was asked
 * for. Exits with status 1 when it cannot be opened. */
static inline FILE *bench_out(int argc, char **argv)
{
    if (argc < 2) return NULL;
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        exit(1);
    }
    return f;
}

#endif
