/*
 * Where a mission's pictures go (take_picture, SPEC §5). Each mission gets
 * a directory of its own, made on its first picture under a parent (the
 * --pictures directory, else $TMPDIR or /tmp) with an unpredictable name,
 * mode 0700: a parent others can write to (/tmp) cannot hand the mission a
 * planted symlink, neither for the directory nor for a picture's file,
 * which is created inside it without following links and never replaces a
 * file. A mission keeps at most max_count pictures and max_bytes bytes, so a
 * plan like `1000{1000{tp}}` cannot fill the disk.
 */
#ifndef ALOFT_DRONE_PICTURES_H
#define ALOFT_DRONE_PICTURES_H

#include <stddef.h>
#include <stdint.h>

#define PICTURES_DEFAULT_MAX_COUNT 100
#define PICTURES_DEFAULT_MAX_BYTES (64ull * 1024 * 1024)

typedef struct pictures {
    char parent[512]; /* where the mission's directory is made */
    char dir[600];    /* the mission's directory, "" until the first picture */
    int dirfd;        /* open on DIR, or -1 */
    int count;        /* pictures saved */
    uint64_t bytes;   /* their bytes */
    int max_count;    /* caps of the mission */
    uint64_t max_bytes;
} pictures;

/* Sets P up for a mission: PARENT (NULL or "": $TMPDIR, else /tmp), the caps
 * (0: the defaults above). Nothing is made on disk yet. */
void pictures_init(pictures *p, const char *parent, int max_count, uint64_t max_bytes);

/* Saves LEN bytes of DATA as the mission's next picture, a file named with
 * EXT ("png"); its path goes to PATH. Returns 0 when saved; 1 when a cap
 * would be passed (nothing written; ERR says which); -1 when it could not
 * be written (ERR says why: a full disk, EFBIG past RLIMIT_FSIZE, a parent
 * that is not a directory, ...; no partial file is left). */
int pictures_save(pictures *p, const void *data, size_t len, const char *ext, char *path,
                  size_t pathlen, char *err, size_t errlen);

/* For a world that only rehearses a plan (verification): takes the
 * mission's next picture without drawing or writing it. The count cap
 * holds as in pictures_save (1 past it, ERR says so); the bytes cap cannot
 * (nothing is encoded). PATH gets a name that says nothing was written. */
int pictures_skip(pictures *p, const char *ext, char *path, size_t pathlen, char *err,
                  size_t errlen);

/* Encodes WIDTH x HEIGHT BGR pixels (rows of STRIDE bytes) as PNG into a
 * malloc'd *DATA of *LEN bytes (host/drone/pictures_png.c). Returns 0, or
 * -1 with a message. */
int pictures_png(const unsigned char *bgr, int width, int height, int stride, unsigned char **data,
                 size_t *len, char *err, size_t errlen);

/* Closes the directory (the pictures stay; a directory left empty by a
 * failed first picture is removed). */
void pictures_close(pictures *p);

#endif
