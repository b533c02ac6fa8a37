/* A mission's pictures directory (host/drone/pictures.h): made on the first
 * picture with a fresh name, 0700; a planted symlink, even at the very name
 * of the next picture, is never followed; the caps hold at their edges. */
#include "check.h"
#include "drone/pictures.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static const char target_text[] = "must stay as it is";

static bool target_intact(const char *path)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(target_text) && memcmp(buf, target_text, n) == 0;
}

static void test_fresh_private_directory(const char *parent)
{
    pictures a, b;
    pictures_init(&a, parent, 0, 0);
    pictures_init(&b, parent, 0, 0);
    CHECK(a.max_count == PICTURES_DEFAULT_MAX_COUNT && a.max_bytes == PICTURES_DEFAULT_MAX_BYTES);
    CHECK(a.dir[0] == '\0', "nothing made before the first picture");
    char pa[1024], pb[1024], err[256] = "";
    CHECK(pictures_save(&a, "png", 3, "png", pa, sizeof pa, err, sizeof err) == 0, "%s", err);
    CHECK(pictures_save(&b, "png", 3, "png", pb, sizeof pb, err, sizeof err) == 0, "%s", err);
    CHECK(strcmp(a.dir, b.dir) != 0, "each mission its own directory: %s", a.dir);
    CHECK(strncmp(a.dir, parent, strlen(parent)) == 0, "%s under %s", a.dir, parent);
    struct stat st;
    CHECK(lstat(a.dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "mode %o",
          st.st_mode & 0777);
    CHECK(lstat(pa, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 3);
    pictures_close(&a);
    pictures_close(&b);
}

static void test_planted_symlink(const char *parent)
{
    char target[1024], link[1200], path[1024], err[256] = "";
    snprintf(target, sizeof target, "%s/target", parent);
    FILE *f = fopen(target, "w");
    fputs(target_text, f);
    fclose(f);
    pictures p;
    pictures_init(&p, parent, 0, 0);
    CHECK(pictures_save(&p, "one", 3, "png", path, sizeof path, err, sizeof err) == 0);
    /* Someone who guessed the next name plants it: refused, not followed. */
    snprintf(link, sizeof link, "%s/picture-002.png", p.dir);
    CHECK(symlink(target, link) == 0);
    CHECK(pictures_save(&p, "two", 3, "png", path, sizeof path, err, sizeof err) == -1);
    CHECK(strstr(err, "picture-002.png") != NULL, "%s", err);
    CHECK(target_intact(target), "the symlink's target is untouched");
    pictures_close(&p);
    /* The parent itself being a symlink is the user's choice (--pictures):
     * but a symlink at a name in it is never the mission's directory. */
    unlink(link);
}

static void test_caps(const char *parent)
{
    char path[1024], err[256] = "";
    pictures p;
    pictures_init(&p, parent, 2, 0);
    CHECK(pictures_save(&p, "a", 1, "png", path, sizeof path, err, sizeof err) == 0);
    CHECK(pictures_save(&p, "b", 1, "png", path, sizeof path, err, sizeof err) == 0);
    CHECK(pictures_save(&p, "c", 1, "png", path, sizeof path, err, sizeof err) == 1);
    CHECK(strstr(err, "2 pictures") != NULL, "%s", err);
    CHECK(p.count == 2);
    pictures_close(&p);

    pictures_init(&p, parent, 0, 10);
    CHECK(pictures_save(&p, "0123", 4, "png", path, sizeof path, err, sizeof err) == 0);
    /* 4 + 7 passes 10 by one: refused, nothing written; 4 + 6 is at it */
    CHECK(pictures_save(&p, "0123456", 7, "png", path, sizeof path, err, sizeof err) == 1);
    CHECK(strstr(err, "10 bytes") != NULL, "%s", err);
    CHECK(pictures_save(&p, "012345", 6, "png", path, sizeof path, err, sizeof err) == 0);
    CHECK(pictures_save(&p, "x", 1, "png", path, sizeof path, err, sizeof err) == 1);
    CHECK(p.count == 2 && p.bytes == 10);
    char gone[1200];
    snprintf(gone, sizeof gone, "%s/picture-003.png", p.dir);
    CHECK(access(gone, F_OK) != 0, "no file for a refused picture");
    pictures_close(&p);
}

static void test_unwritable_parent(void)
{
    char path[1024], err[256] = "";
    pictures p;
    pictures_init(&p, "/proc/no/such/dir", 0, 0);
    CHECK(pictures_save(&p, "a", 1, "png", path, sizeof path, err, sizeof err) == -1);
    CHECK(strstr(err, "/proc/no/such/dir") != NULL, "%s", err);
    pictures_close(&p);
    /* a parent name too long is refused, not cut to another directory's */
    char longer[700];
    memset(longer, 'a', sizeof longer - 1);
    longer[0] = '/';
    longer[sizeof longer - 1] = '\0';
    pictures_init(&p, longer, 0, 0);
    CHECK(pictures_save(&p, "a", 1, "png", path, sizeof path, err, sizeof err) == -1);
    CHECK(strstr(err, "too long") != NULL, "%s", err);
    pictures_close(&p);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d) closedir(d);
    return n;
}

/* A first picture that cannot be written (past RLIMIT_FSIZE, as on a full
 * disk) leaves no empty directory behind; a directory with a picture in it
 * stays. */
static void test_no_empty_directory_left(const char *parent)
{
    char path[1024], err[256] = "";
    int before = entries(parent);
    struct rlimit old;
    getrlimit(RLIMIT_FSIZE, &old);
    struct rlimit small = {4, old.rlim_max};
    signal(SIGXFSZ, SIG_IGN);
    pictures p;
    pictures_init(&p, parent, 0, 0);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    CHECK(pictures_save(&p, "0123456789", 10, "png", path, sizeof path, err, sizeof err) == -1,
          "a picture past the file-size limit fails");
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(p.dir[0] != '\0', "the directory was made for it");
    pictures_close(&p);
    CHECK(entries(parent) == before, "no empty directory left: %d entries, %d before",
          entries(parent), before);

    pictures_init(&p, parent, 0, 0);
    CHECK(pictures_save(&p, "ok", 2, "png", path, sizeof path, err, sizeof err) == 0);
    pictures_close(&p);
    CHECK(access(path, F_OK) == 0, "a saved picture stays after close: %s", path);
}

/* A rehearsal's pictures (verification): counted against the cap at, inside
 * and past it, and nothing made on disk. */
static void test_skip(const char *parent)
{
    char path[1024], err[256] = "";
    int before = entries(parent);
    pictures p;
    pictures_init(&p, parent, 2, 0);
    CHECK(pictures_skip(&p, "png", path, sizeof path, err, sizeof err) == 0);
    CHECK(strstr(path, "picture-001.png") && strstr(path, "not written"), "%s", path);
    CHECK(pictures_skip(&p, "png", path, sizeof path, err, sizeof err) == 0, "the 2nd of 2");
    CHECK(pictures_skip(&p, "png", path, sizeof path, err, sizeof err) == 1, "the 3rd of 2");
    CHECK(strstr(err, "2 pictures") != NULL, "%s", err);
    CHECK(p.count == 2 && p.dir[0] == '\0', "counted, no directory");
    pictures_close(&p);
    CHECK(entries(parent) == before, "nothing on disk");
}

int main(void)
{
    char parent[] = "/tmp/aloft-test-pictures-XXXXXX";
    if (!mkdtemp(parent)) return 1;
    test_fresh_private_directory(parent);
    test_planted_symlink(parent);
    test_caps(parent);
    test_unwritable_parent();
    test_no_empty_directory_left(parent);
    test_skip(parent);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", parent);
    if (system(cmd) != 0) failures++;
    return failures ? 1 : 0;
}
