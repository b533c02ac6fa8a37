/*
 * Who is writing a mission, so that store_open can tell a mission that is
 * still flying from one whose process died (SPEC §12: a killed mission is
 * marked interrupted at the next open).
 *
 * The test is a lock, not a process id: while a mission runs, its store
 * holds an open-file-description lock on byte ID of "DB-missions", a file
 * beside the database. The kernel drops the lock when the process dies, how
 * ever it dies, so "nobody holds byte ID" means "nobody is writing mission
 * ID" -- without /proc, without trusting pids (which are reused, and differ
 * between containers sharing one database). OFD locks, unlike classic POSIX
 * record locks, are not lost when some other descriptor of the same file is
 * closed, and they conflict between two store handles of one process.
 *
 * missions.owner says which test applies: "lock BOOT_ID PID START" when the
 * writer holds the lock, "pid BOOT_ID PID START" when it could not open the
 * lock file. Then (or when the reader cannot open it) the process identity,
 * the kernel's boot id and the process's start time from /proc, decides:
 * a reboot or a reused pid still does not make a dead mission look alive.
 */
#include "store/store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void store_owner_open(store *s)
{
    s->owner_fd = -1;
#ifdef F_OFD_SETLK
    if (strcmp(s->path, ":memory:") == 0) return;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s-missions", s->path);
    s->owner_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
#endif
}

void store_owner_close(store *s)
{
    if (s->owner_fd >= 0) close(s->owner_fd);
    s->owner_fd = -1;
}

#ifdef F_OFD_SETLK
static int lock_byte(store *s, int cmd, short type, int64_t id, struct flock *fl)
{
    memset(fl, 0, sizeof *fl);
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = (off_t)id;
    fl->l_len = 1;
    return fcntl(s->owner_fd, cmd, fl);
}
#endif

int store_owner_claim(store *s, int64_t id)
{
#ifdef F_OFD_SETLK
    struct flock fl;
    if (s->owner_fd >= 0) return lock_byte(s, F_OFD_SETLK, F_WRLCK, id, &fl);
#endif
    (void)s;
    (void)id;
    return -1;
}

void store_owner_release(store *s, int64_t id)
{
#ifdef F_OFD_SETLK
    struct flock fl;
    if (s->owner_fd >= 0) lock_byte(s, F_OFD_SETLK, F_UNLCK, id, &fl);
#endif
    (void)s;
    (void)id;
}

/* ---- the fallback: process identity ------------------------------------- */

static void read_boot_id(char *out, size_t outlen)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    out[0] = '\0';
    if (f) {
        if (fgets(out, (int)outlen, f)) out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
    if (!out[0]) snprintf(out, outlen, "-");
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks
 * after boot; 0 if unknown. */
static unsigned long long process_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and parentheses. */
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        if (++field == 22) return strtoull(tok, NULL, 10);
    return 0;
}

void store_owner_self(store *s, char *out, size_t outlen)
{
    /* Read once per process (a forked child is another): the store's
     * writer asks for every mission that begins, inside the transaction
     * the others wait for. */
    pid_t pid = getpid();
    if (s->self_pid != pid || !s->self[0]) {
        char boot[64];
        read_boot_id(boot, sizeof boot);
        snprintf(s->self, sizeof s->self, "%s %s %ld %llu", s->owner_fd >= 0 ? "lock" : "pid", boot,
                 (long)pid, process_start((long)pid));
        s->self_pid = pid;
    }
    snprintf(out, outlen, "%s", s->self);
}

static bool process_alive(const char *owner)
{
    char boot[64], mine[64];
    long pid;
    unsigned long long start;
    if (!owner || sscanf(owner, "%*s %63s %ld %llu", boot, &pid, &start) != 3) return false;
    read_boot_id(mine, sizeof mine);
    if (strcmp(boot, mine) != 0) return false;                         /* rebooted since */
    if (start == 0) return kill((pid_t)pid, 0) == 0 || errno == EPERM; /* no /proc */
    return process_start(pid) == start;
}

bool store_owner_alive(store *s, int64_t id, const char *owner)
{
#ifdef F_OFD_SETLK
    struct flock fl;
    bool locked = owner && strncmp(owner, "lock ", 5) == 0;
    if (locked && s->owner_fd >= 0 && lock_byte(s, F_OFD_GETLK, F_WRLCK, id, &fl) == 0)
        return fl.l_type != F_UNLCK;
#endif
    (void)s;
    (void)id;
    return process_alive(owner);
}
