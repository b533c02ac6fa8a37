#include "drone/pictures.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pictures_init(pictures *p, const char *parent, int max_count, uint64_t max_bytes)
{
    memset(p, 0, sizeof *p);
    if (!parent || !parent[0]) parent = getenv("TMPDIR");
    if (!parent || !parent[0]) parent = "/tmp";
    /* A parent too long to hold stays empty: cut short, it would name
     * another directory. open_dir then refuses. */
    if (strlen(parent) < sizeof p->parent) memcpy(p->parent, parent, strlen(parent) + 1);
    p->dirfd = -1;
    p->max_count = max_count > 0 ? max_count : PICTURES_DEFAULT_MAX_COUNT;
    p->max_bytes = max_bytes > 0 ? max_bytes : PICTURES_DEFAULT_MAX_BYTES;
}

/* Makes the mission's directory: mkdtemp picks a name nobody can predict
 * and creates it (never through an existing name, so never through a
 * symlink), 0700; it is then opened without following a link and checked
 * to be the directory just made, ours alone. */
static int open_dir(pictures *p, char *err, size_t errlen)
{
    char dir[sizeof p->dir];
    int n = snprintf(dir, sizeof dir, "%s/aloft-pictures-XXXXXX", p->parent);
    if (!p->parent[0] || n < 0 || (size_t)n >= sizeof dir)
        return errmsg_set(err, errlen, "the pictures directory name is too long");
    if (!mkdtemp(dir))
        return errmsg_set(err, errlen, "cannot make a pictures directory in %s: %s", p->parent,
                          strerror(errno));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
        int e = errno;
        if (fd >= 0) close(fd);
        return errmsg_set(err, errlen, "the pictures directory %s is not ours alone%s%s", dir,
                          fd < 0 ? ": " : "", fd < 0 ? strerror(e) : "");
    }
    p->dirfd = fd;
    memcpy(p->dir, dir, sizeof dir);
    return 0;
}

/* Writes all LEN bytes to FD; -1 with errno on failure. */
static int write_all(int fd, const unsigned char *s, size_t len)
{
    while (len) {
        ssize_t w = write(fd, s, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        s += w, len -= (size_t)w;
    }
    return 0;
}

static int count_cap(const pictures *p, char *err, size_t errlen)
{
    if (p->count < p->max_count) return 0;
    errmsg_set(err, errlen, "the mission's %d pictures are taken (the cap)", p->max_count);
    return 1;
}

int pictures_skip(pictures *p, const char *ext, char *path, size_t pathlen, char *err,
                  size_t errlen)
{
    if (count_cap(p, err, errlen)) return 1;
    p->count++;
    snprintf(path, pathlen, "(not written: a rehearsal)/picture-%03d.%s", p->count, ext);
    return 0;
}

int pictures_save(pictures *p, const void *data, size_t len, const char *ext, char *path,
                  size_t pathlen, char *err, size_t errlen)
{
    if (count_cap(p, err, errlen)) return 1;
    if (len > p->max_bytes - p->bytes) {
        errmsg_set(err, errlen,
                   "the picture (%zu bytes) would pass the mission's cap of %llu bytes", len,
                   (unsigned long long)p->max_bytes);
        return 1;
    }
    if (p->dirfd < 0 && open_dir(p, err, errlen)) return -1;
    char name[64];
    snprintf(name, sizeof name, "picture-%03d.%s", p->count + 1, ext);
    /* O_EXCL and O_NOFOLLOW: a name that exists (it cannot, in a 0700
     * directory made just now, unless something is wrong) is never reused. */
    int fd = openat(p->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errmsg_set(err, errlen, "cannot create %s/%s: %s", p->dir, name, strerror(errno));
    int rc = write_all(fd, data, len);
    int e = errno;
    if (close(fd) != 0 && rc == 0) rc = -1, e = errno;
    if (rc) {
        unlinkat(p->dirfd, name, 0);
        return errmsg_set(err, errlen, "cannot write %s/%s: %s", p->dir, name, strerror(e));
    }
    p->count++;
    p->bytes += len;
    snprintf(path, pathlen, "%s/%s", p->dir, name);
    return 0;
}

void pictures_close(pictures *p)
{
    if (p->dirfd >= 0) close(p->dirfd);
    p->dirfd = -1;
    /* A directory made for a picture that could not be written (a full
     * disk, a size limit) holds nothing: it is not left behind. rmdir
     * removes only an empty directory, never a picture. */
    if (p->dir[0] && p->count == 0) rmdir(p->dir);
}
