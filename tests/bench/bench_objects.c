/*
 * bench_objects: what a sighting costs the object memory (SPEC §12) as the
 * memory grows. Issue target: the per-sighting cost flat from 20 to 20,000
 * remembered objects (here: the median at 20,000 at most 1.5 times the
 * median at 20), and reported at 100,000.
 *
 * For each size the store is filled to that many objects of ten classes,
 * spread over 200 x 200 m (bulk SQL, the index kept by its triggers), then
 * store_record_object is timed for sightings at random places: some merge
 * into a remembered object, most are new ones, as in a mission.
 *
 *   bench_objects [OUT.json]
 */
#include "bench_out.h"
#include "clock.h"
#include "store/store.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TARGET_FLAT_RATIO 1.5
#define SIGHTINGS 2000
#define SPAN_CM 20000.0

static const char *const classes[] = {"apple", "chair",  "person", "cup",    "book",
                                      "lamp",  "bottle", "dog",    "laptop", "plant"};

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Adds N objects to the store at PATH in the world of mission MID. */
static int fill(const char *path, int64_t mid, int n)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    sqlite3_busy_timeout(db, 10000);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO objects(class, x, y, z, conf, sightings, first_seen,"
                                " last_seen, last_mission, world) VALUES (?1, ?2, ?3, ?4, 0.5, 1,"
                                " 'x', 'x', ?5, (SELECT world FROM missions WHERE id = ?5))",
                                -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) {
        sqlite3_bind_text(st, 1, classes[i % 10], -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, uniform() * SPAN_CM);
        sqlite3_bind_double(st, 3, uniform() * SPAN_CM);
        sqlite3_bind_double(st, 4, uniform() * 300);
        sqlite3_bind_int64(st, 5, mid);
        if (sqlite3_step(st) != SQLITE_DONE) rc = SQLITE_ERROR;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_exec(db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The median and p99 sighting cost (us) with N objects remembered. */
static int measure(const char *dir, int n, double *p50, double *p99)
{
    char path[600], err[256];
    snprintf(path, sizeof path, "%s/objects-%d.db", dir, n);
    store *s = store_open(path, 0, err, sizeof err);
    store_mission_info info = {.scene_json = "{\"bench\":true}"};
    store_mission *m = s ? store_mission_begin(s, &info, err, sizeof err) : NULL;
    if (!m || fill(path, store_mission_id(m), n)) {
        fprintf(stderr, "bench_objects: %s\n", err);
        store_close(s);
        return -1;
    }
    static double t[SIGHTINGS];
    for (int i = 0; i < SIGHTINGS; i++) {
        double x = uniform() * SPAN_CM, y = uniform() * SPAN_CM, z = uniform() * 300;
        double t0 = clock_now_ms();
        if (store_record_object(m, classes[i % 10], x, y, z, 0.7, err, sizeof err) < 0) {
            fprintf(stderr, "bench_objects: %s\n", err);
            return -1;
        }
        t[i] = (clock_now_ms() - t0) * 1000;
    }
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    store_close(s);
    static const char *const suffix[] = {"", "-wal", "-shm", "-missions"};
    for (int i = 0; i < 4; i++) {
        char f[640];
        snprintf(f, sizeof f, "%s%s", path, suffix[i]);
        unlink(f);
    }
    qsort(t, SIGHTINGS, sizeof *t, cmp_double);
    *p50 = t[SIGHTINGS / 2];
    *p99 = t[SIGHTINGS * 99 / 100];
    return 0;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/aloft-bench-objects-XXXXXX";
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    static const int sizes[] = {20, 2000, 20000, 100000};
    enum { NS = sizeof sizes / sizeof *sizes };
    double p50[NS], p99[NS];
    int rc = 0;
    for (int i = 0; i < NS && rc == 0; i++)
        rc = measure(dir, sizes[i], &p50[i], &p99[i]);
    rmdir(dir);
    if (rc) return 1;
    double flat = p50[2] / p50[0], flat100k = p50[3] / p50[0];
    bool met = flat <= TARGET_FLAT_RATIO;
    printf("bench_objects: per-sighting cost (median / p99 us):");
    for (int i = 0; i < NS; i++)
        printf(" %d objects %.1f / %.1f;", sizes[i], p50[i], p99[i]);
    printf("\n  20,000 vs 20: %.2fx (target <= %.1fx: %s); 100,000 vs 20: %.2fx\n", flat,
           TARGET_FLAT_RATIO, met ? "met" : "missed", flat100k);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f, "{");
        for (int i = 0; i < NS; i++)
            fprintf(f,
                    "\"sighting_%d_p50_us\":{\"value\":%.2f,\"unit\":\"us\"},"
                    "\"sighting_%d_p99_us\":{\"value\":%.2f,\"unit\":\"us\"},",
                    sizes[i], p50[i], sizes[i], p99[i]);
        fprintf(f,
                "\"sighting_ratio_20000_vs_20\":{\"value\":%.3f,\"unit\":\"x\"},"
                "\"sighting_ratio_100000_vs_20\":{\"value\":%.3f,\"unit\":\"x\"},"
                "\"sighting_target_ratio\":{\"value\":%.1f,\"unit\":\"x\"},"
                "\"sighting_target_met\":%s}\n",
                flat, flat100k, TARGET_FLAT_RATIO, met ? "true" : "false");
        fclose(f);
    }
    return 0;
}
