/*
 * The object memory's spatial index (schema version 5, SPEC §12): sightings
 * merge exactly as the distance rule says (at, just inside and just outside
 * STORE_OBJECT_MERGE_CM, in a cube's corner that the index returns but the
 * distance refuses), into the nearest object, into an object that merges
 * moved, among thousands of others; a version 4 store is migrated with its
 * objects indexed; positions that the index cannot hold are refused; the
 * sightings of one view (store_record_objects) merge as one by one would,
 * and a view with one refused sighting records none; the memory a planning
 * prompt recalls sees every sighting recorded before it, within its world
 * and its limit.
 *
 * labels: store
 */
#include "store/store.h"
#include "test_store_check.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static int64_t see(store_mission *m, const char *cls, double x, double y, double z)
{
    char err[256];
    int64_t id = store_record_object(m, cls, x, y, z, 0.5, err, sizeof err);
    if (id <= 0) fprintf(stderr, "sighting (%g, %g, %g): %s\n", x, y, z, err);
    return id;
}

static const store_mission_info office = {.scene_json = "{\"name\":\"office\"}"};

/* At, just inside and just outside the merge distance, and the corner of
 * the search cube. */
static void test_merge_boundaries(store *s)
{
    char err[256];
    store_mission *m = store_mission_begin(s, &office, err, sizeof err);
    CHECK(m != NULL, "begin: %s", err);
    if (!m) return;
    const double r = STORE_OBJECT_MERGE_CM;
    /* Each case starts from a fresh object far from the others. */
    struct {
        double dx, dy, dz;
        bool same;
        const char *what;
    } cases[] = {
        {r, 0, 0, true, "exactly at the merge distance along x"},
        {0, 0, -r, true, "exactly at the merge distance along z"},
        {0, r - 0.01, 0, true, "just inside along y"},
        {0, r + 0.01, 0, false, "just outside along y"},
        {-(r + 0.01), 0, 0, false, "just outside along -x"},
        {0.8 * r, 0.8 * r, 0, false, "inside the search cube, outside the sphere"},
        {0.7 * r, 0.7 * r, 0, true, "inside the sphere, off the axes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double x = 10000.0 * (double)(i + 1), y = 500, z = 100;
        int64_t a = see(m, "cup", x, y, z);
        int64_t b = see(m, "cup", x + cases[i].dx, y + cases[i].dy, z + cases[i].dz);
        CHECK(a > 0 && b > 0 && (a == b) == cases[i].same, "%s: objects %lld and %lld",
              cases[i].what, (long long)a, (long long)b);
    }
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

/* The nearest of two candidates wins; a merge moves the object and the
 * index follows it. */
static void test_nearest_and_moved(store *s)
{
    char err[256];
    store_mission *m = store_mission_begin(s, &office, err, sizeof err);
    if (!m) return;
    int64_t a = see(m, "book", -5000, 0, 100);
    int64_t b = see(m, "book", -5000 + 60, 0, 100);
    CHECK(a != b, "two books 60 cm apart are two objects");
    CHECK(see(m, "book", -5000 + 35, 0, 100) == b, "a sighting nearer the second merges into it");
    /* The second book is now at -4952.5: 32.5 from this one, the first 20. */
    CHECK(see(m, "book", -5000 + 20, 0, 100) == a, "one nearer the first merges into the first");

    /* A lamp seen at -8000 and -7960 is at -7980: a sighting 45 cm from
     * there (65 from where it was first seen) must find it. */
    int64_t lamp = see(m, "lamp", -8000, 0, 100);
    see(m, "lamp", -8000 + 40, 0, 100);
    CHECK(see(m, "lamp", -8000 + 65, 0, 100) == lamp,
          "the index follows a merged object to its new mean position");
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

/* Among thousands of objects of several classes, each sighting finds its
 * own: the index narrows, the class and distance still decide. */
static void test_many_objects(store *s)
{
    char err[256];
    store_mission *m = store_mission_begin(s, &office, err, sizeof err);
    if (!m) return;
    static const char *const cls[] = {"apple", "chair", "person"};
    enum { SIDE = 40 };
    static int64_t ids[SIDE][SIDE];
    for (int i = 0; i < SIDE; i++)
        for (int j = 0; j < SIDE; j++)
            ids[i][j] = see(m, cls[(i + j) % 3], 200.0 * i, 200.0 * j - 1e6, 50);
    int wrong = 0;
    for (int i = 0; i < SIDE; i += 3)
        for (int j = 0; j < SIDE; j += 7) {
            const char *c = cls[(i + j) % 3];
            wrong += see(m, c, 200.0 * i + 20, 200.0 * j - 1e6 - 20, 60) != ids[i][j];
            /* Another class at the same spot is never merged into it. */
            wrong += see(m, cls[(i + j + 1) % 3], 200.0 * i, 200.0 * j - 1e6, 50) == ids[i][j];
        }
    CHECK(wrong == 0, "%d sightings among %d objects merged into the wrong one", wrong,
          SIDE * SIDE);
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);

    /* Another world's sighting at a remembered spot is a new object. */
    store_mission_info other = {.scene_json = "{\"name\":\"garden\"}"};
    m = store_mission_begin(s, &other, err, sizeof err);
    if (!m) return;
    CHECK(see(m, cls[0], 0, -1e6, 50) != ids[0][0], "worlds stay apart");
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

/* Not a number, infinite, beyond what the index holds: refused, nothing
 * written; just inside the limit is remembered. */
static void test_bad_positions(store *s)
{
    char err[256];
    store_mission *m = store_mission_begin(s, &office, err, sizeof err);
    if (!m) return;
    store_object before[1];
    int n0 = store_objects(s, "kite", before, 1, err, sizeof err);
    const double bad[][3] = {{NAN, 0, 0},         {0, INFINITY, 0},     {0, 0, -INFINITY},
                             {1.0000001e9, 0, 0}, {0, -1.0000001e9, 0}, {0, 0, 1e300}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int64_t id =
            store_record_object(m, "kite", bad[i][0], bad[i][1], bad[i][2], 0.5, err, sizeof err);
        CHECK(id == -1 && strstr(err, "position"), "position %zu refused: %lld '%s'", i,
              (long long)id, err);
    }
    CHECK(store_objects(s, "kite", before, 1, err, sizeof err) == n0, "nothing remembered");
    int64_t edge = see(m, "kite", 1e9, -1e9, 0);
    CHECK(edge > 0 && see(m, "kite", 1e9 - 10, -1e9, 0) == edge,
          "an object at the limit is remembered and found again");
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

/* One view's sightings in one call: the second apple merges into the first
 * (in the same transaction), the far one and the cup are new; a view with a
 * position the index cannot hold is refused whole. */
static void test_view(store *s)
{
    char err[256];
    store_mission_info park = {.scene_json = "{\"name\":\"park\"}"};
    store_mission *m = store_mission_begin(s, &park, err, sizeof err);
    CHECK(m != NULL, "begin: %s", err);
    if (!m) return;
    store_object objs[8];
    const double r = STORE_OBJECT_MERGE_CM;
    store_sighting view[] = {{"plum", 0, 5000, 80, 0.6},
                             {"plum", r - 0.01, 5000, 80, 0.9},
                             {"plum", r + 1, 5000 + r, 80, 0.5},
                             {"mug", 0, 5000, 80, 0.7}};
    CHECK(store_record_objects(m, view, 4, err, sizeof err) == 0, "view: %s", err);
    int plums = store_objects(s, "plum", objs, 8, err, sizeof err);
    CHECK(plums == 2 && store_objects(s, "mug", objs + 2, 6, err, sizeof err) == 1,
          "three objects from four sightings: %d plums", plums);
    int merged = 0;
    for (int i = 0; i < plums; i++)
        if (objs[i].sightings == 2) merged++;
    CHECK(merged == 1, "the near plums are one object seen twice");
    store_sighting bad[] = {{"kettle", 0, 6000, 80, 0.5}, {"kettle", NAN, 6000, 80, 0.5}};
    err[0] = '\0';
    CHECK(store_record_objects(m, bad, 2, err, sizeof err) == -1 && strstr(err, "position"),
          "a view with a bad position is refused: '%s'", err);
    store_sighting nameless[] = {{"kettle", 0, 6000, 80, 0.5}, {"", 0, 6000, 80, 0.5}};
    CHECK(store_record_objects(m, nameless, 2, err, sizeof err) == -1, "a nameless one too");
    CHECK(store_objects(s, "kettle", objs, 8, err, sizeof err) == 0, "nothing of them remembered");
    CHECK(store_record_objects(m, view, 0, err, sizeof err) == 0, "an empty view is nothing");
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

/* The memory a planning prompt recalls (store_world_objects, a statement
 * prepared once per store): every call sees what was recorded before it,
 * honours its own limit and the mission's world, and a new mission of the
 * same world recalls the same objects. */
static bool recalls(store_mission *m, int max, int want, const char *first)
{
    store_object objs[8];
    double ages[8];
    char err[256] = "";
    int n = store_world_objects(m, objs, ages, max, err, sizeof err);
    bool ok = n == want && (!first || (n > 0 && strcmp(objs[0].cls, first) == 0));
    if (!ok)
        fprintf(stderr, "recall of %d: %d objects (want %d), first %s: %s\n", max, n, want,
                n > 0 ? objs[0].cls : "-", err);
    return ok;
}

static void test_recall(store *s)
{
    char err[256];
    store_mission_info orchard = {.scene_json = "{\"name\":\"orchard\"}"};
    store_mission *m = store_mission_begin(s, &orchard, err, sizeof err);
    store_mission *other = store_mission_begin(s, &office, err, sizeof err);
    CHECK(m && other, "begin: %s", err);
    if (!m || !other) return;
    CHECK(recalls(m, 8, 0, NULL), "a new world remembers nothing");
    CHECK(see(m, "rose", 0, 9000, 50) > 0, "a rose seen");
    CHECK(recalls(m, 8, 1, "rose"), "the rose is recalled at once");
    CHECK(see(m, "tulip", 3000, 9000, 50) > 0, "a tulip seen");
    CHECK(recalls(m, 1, 1, "tulip"), "a limit of one: the newest only");
    CHECK(recalls(m, 8, 2, "tulip"), "the next call has its own limit: both");
    CHECK(recalls(m, 0, 0, NULL), "a limit of zero: nothing");
    store_object objs[8];
    double ages[8];
    int n = store_world_objects(other, objs, ages, 8, err, sizeof err);
    bool garden_seen = false;
    for (int i = 0; i < n; i++)
        garden_seen |= strcmp(objs[i].cls, "rose") == 0 || strcmp(objs[i].cls, "tulip") == 0;
    CHECK(n > 0 && !garden_seen, "another world recalls its own objects only (%d)", n);
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    store_mission_end(other, STORE_OK, NULL, NULL, err, sizeof err);
    m = store_mission_begin(s, &orchard, err, sizeof err);
    CHECK(m && recalls(m, 8, 2, "tulip"), "the next mission of the world recalls both");
    if (m) store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

static void run_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_open(path, &db);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "setup SQL failed: %s\n", msg);
        failures++;
        sqlite3_free(msg);
    }
    sqlite3_close(db);
}

static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v = -1;
    sqlite3_open(path, &db);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

/* A store of version 4 (objects, no index) is migrated: its objects are
 * indexed and a new sighting merges into them. */
static void test_migration_from_v4(void)
{
    char err[256], path[512];
    snprintf(path, sizeof path, "%s", tmp_path("v4.db"));
    store *s = store_open(path, 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    store_mission *m = store_mission_begin(s, &office, err, sizeof err);
    int64_t apple = see(m, "apple", 100, 200, 80);
    see(m, "chair", 400, 200, 0);
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    store_close(s);
    /* Back to what version 4 wrote: no index, no triggers. */
    run_sql(path, "BEGIN; DROP TRIGGER objects_at_insert; DROP TRIGGER objects_at_move;"
                  " DROP TRIGGER objects_at_delete; DROP TABLE objects_at;"
                  " PRAGMA user_version = 4; COMMIT;");
    CHECK(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'objects_at'") == 0,
          "the index is gone before the migration");

    s = store_open(path, 0, err, sizeof err);
    CHECK(s != NULL, "a version 4 store opens: %s", err);
    if (!s) return;
    CHECK(sql_int(path, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "migrated to %d",
          STORE_SCHEMA_VERSION);
    CHECK(sql_int(path, "SELECT count(*) FROM objects_at") == 2, "both old objects indexed");
    m = store_mission_begin(s, &office, err, sizeof err);
    CHECK(m && see(m, "apple", 110, 190, 80) == apple,
          "a new sighting merges into an object remembered before the migration");
    if (m) store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    store_object objs[4];
    CHECK(store_objects(s, NULL, objs, 4, err, sizeof err) == 2, "still two objects");
    store_close(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aloft-test-store-objects-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    char err[256];
    store *s = store_open(tmp_path("objects.db"), 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (s) {
        test_merge_boundaries(s);
        test_nearest_and_moved(s);
        test_many_objects(s);
        test_bad_positions(s);
        test_view(s);
        test_recall(s);
        store_close(s);
    }
    test_migration_from_v4();
    return check_finish("test_store_objects", tmpdir);
}
