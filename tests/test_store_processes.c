/*
 * The store across processes, with the store_writer tool (tests/tools):
 * - a writer killed with SIGKILL mid-mission leaves a database that passes
 *   `PRAGMA integrity_check`, holds every skill call the writer reported as
 *   recorded, and shows the mission as interrupted at the next open;
 * - writers running at once on one database all finish, none loses an
 *   event, and a reader polling meanwhile is never refused.
 */
#include "store/store.h"
#include "test_store_check.h"

#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];
static char writer[512];

typedef struct child {
    pid_t pid;
    FILE *out; /* its stdout */
} child;

static int spawn_writer(child *c, const char *db, long events)
{
    int fd[2];
    if (pipe(fd)) return -1;
    c->pid = fork();
    if (c->pid < 0) return -1;
    if (c->pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        char n[32];
        snprintf(n, sizeof n, "%ld", events);
        execl(writer, writer, "--db", db, "--events", n, (char *)NULL);
        perror(writer);
        _exit(127);
    }
    close(fd[1]);
    c->out = fdopen(fd[0], "r");
    return 0;
}

static int wait_exit(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs SQL returning one text value; "" on error. */
static void query_text(sqlite3 *db, const char *sql, char *out, size_t outlen)
{
    sqlite3_stmt *st;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* Checks that mission ID holds the completed calls turn_cw([0]) ..
 * turn_cw([LAST]) in order (and possibly more, written after the last line
 * was read). Returns how many completed calls there are. */
static long check_calls(sqlite3 *db, long long id, long last)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT args, done FROM skill_calls WHERE mission_id = ? ORDER BY seq",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    long i = 0, pending = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char want[32];
        snprintf(want, sizeof want, "[%ld]", i);
        const char *args = (const char *)sqlite3_column_text(st, 0);
        if (!sqlite3_column_int(st, 1)) {
            pending++;
            continue;
        }
        CHECK(pending == 0, "mission %lld: only the last call may be unfinished", id);
        CHECK(strcmp(args, want) == 0, "mission %lld: call %ld has args %s", id, i, args);
        i++;
    }
    sqlite3_finalize(st);
    CHECK(i > last, "mission %lld: the writer reported call %ld done, the store has %ld", id, last,
          i);
    CHECK(pending <= 1, "mission %lld: %ld unfinished calls", id, pending);
    return i;
}

static void test_sigkill_mid_mission_loses_nothing(void)
{
    for (int round = 0; round < 5; round++) {
        char db[512];
        snprintf(db, sizeof db, "%s/kill%d.db", tmpdir, round);
        child c;
        CHECK(spawn_writer(&c, db, 1000000) == 0, "spawn");
        char line[128];
        long long id = -1;
        long last = -1, stop_after = 40 + 97 * round;
        while (fgets(line, sizeof line, c.out)) {
            sscanf(line, "mission %lld", &id);
            sscanf(line, "call %ld", &last);
            if (last >= stop_after) break;
        }
        kill(c.pid, SIGKILL); /* while it is writing the next events */
        fclose(c.out);
        CHECK(wait_exit(c.pid) == 128 + SIGKILL, "the writer was killed");
        CHECK(id > 0 && last == stop_after, "read up to call %ld of mission %lld", last, id);

        sqlite3 *raw;
        sqlite3_open(db, &raw);
        char result[256];
        query_text(raw, "PRAGMA integrity_check", result, sizeof result);
        CHECK(strcmp(result, "ok") == 0, "integrity_check after SIGKILL: %s", result);
        check_calls(raw, id, last);
        sqlite3_close(raw);

        char err[256];
        store *s = store_open(db, STORE_OPEN_EXISTING, err, sizeof err);
        CHECK(s != NULL, "reopen: %s", err);
        if (!s) continue;
        cJSON *doc = store_mission_json(s, id, err, sizeof err);
        const cJSON *m = cJSON_GetObjectItem(doc, "mission");
        const cJSON *status = cJSON_GetObjectItem(m, "status");
        CHECK(status && strcmp(status->valuestring, "interrupted") == 0,
              "the killed mission is interrupted, not %s", status ? status->valuestring : "?");
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(m, "duration_ms")),
              "an interrupted mission has a duration");
        cJSON_Delete(doc);
        store_close(s);
    }
}

static void test_concurrent_writers_lose_nothing(void)
{
    enum { WRITERS = 3, EVENTS = 1000 };
    char db[512];
    snprintf(db, sizeof db, "%s/shared.db", tmpdir); /* created by whichever starts first */
    child c[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        CHECK(spawn_writer(&c[i], db, EVENTS) == 0, "spawn");

    /* Read while they write, until all have exited: a reader must never be
     * refused, and must see the missions grow. */
    int reads = 0, read_errors = 0, running = WRITERS, codes[WRITERS];
    char err[256];
    while (running > 0) {
        for (int i = 0; i < WRITERS; i++) {
            int status;
            if (c[i].pid > 0 && waitpid(c[i].pid, &status, WNOHANG) == c[i].pid) {
                codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                c[i].pid = 0;
                running--;
            }
        }
        store *s = store_open(db, STORE_OPEN_EXISTING, err, sizeof err);
        if (!s) continue; /* not created yet */
        cJSON *list = store_list_json(s, err, sizeof err);
        if (list)
            reads++;
        else {
            read_errors++;
            fprintf(stderr, "read while writing: %s\n", err);
        }
        cJSON_Delete(list);
        store_close(s);
    }
    CHECK(read_errors == 0, "%d of %d reads failed while writers ran", read_errors,
          reads + read_errors);
    fprintf(stderr, "%d reads while writing\n", reads);

    long long ids[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        char line[128], done[128] = "";
        ids[i] = -1;
        while (fgets(line, sizeof line, c[i].out)) {
            sscanf(line, "mission %lld", &ids[i]);
            if (strncmp(line, "done", 4) == 0) snprintf(done, sizeof done, "%s", line);
        }
        fclose(c[i].out);
        CHECK(codes[i] == 0, "writer %d failed", i);
        CHECK(done[0], "writer %d finished", i);
        fprintf(stderr, "writer %d: %s", i, done);
    }
    sqlite3 *raw;
    sqlite3_open(db, &raw);
    for (int i = 0; i < WRITERS; i++) {
        CHECK(check_calls(raw, ids[i], EVENTS - 1) == EVENTS, "mission %lld has all calls", ids[i]);
        char sql[160], v[64];
        snprintf(sql, sizeof sql,
                 "SELECT status || ' ' || (SELECT count(*) FROM statements WHERE mission_id = "
                 "%lld) FROM missions WHERE id = %lld",
                 ids[i], ids[i]);
        query_text(raw, sql, v, sizeof v);
        char want[64];
        snprintf(want, sizeof want, "ok %d", EVENTS);
        CHECK(strcmp(v, want) == 0, "mission %lld: '%s', want '%s'", ids[i], v, want);
    }
    char v[64];
    query_text(raw, "SELECT sum(sightings) FROM objects WHERE class = 'apple'", v, sizeof v);
    CHECK(atoi(v) == WRITERS * EVENTS / 10, "every sighting merged: %s", v);
    query_text(raw, "SELECT count(*) FROM objects", v, sizeof v);
    CHECK(strcmp(v, "1") == 0, "one apple remembered, got %s", v);
    sqlite3_close(raw);
}

int main(void)
{
    const char *build = getenv("BUILD");
    snprintf(writer, sizeof writer, "%s/store_writer", build ? build : ".");
    if (access(writer, X_OK) != 0) {
        fprintf(stderr, "%s not found (set BUILD to the build directory)\n", writer);
        return 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aloft-test-store-proc-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    test_sigkill_mid_mission_loses_nothing();
    test_concurrent_writers_lose_nothing();
    return check_finish("test_store_processes", tmpdir);
}
