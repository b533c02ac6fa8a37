/* Pictures as PNG bytes (pictures.h), with libpng's simplified API. */
#include "drone/pictures.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest picture encoded: a camera's or scene's size is checked where
 * it enters, this guards the sizes below all the same. */
#define PICTURE_MAX_SIDE 8192

int pictures_png(const unsigned char *bgr, int width, int height, int stride, unsigned char **data,
                 size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    if (width < 1 || height < 1 || width > PICTURE_MAX_SIDE || height > PICTURE_MAX_SIDE ||
        stride < width * 3) {
        snprintf(err, errlen, "picture size %dx%d is out of range", width, height);
        return -1;
    }
    png_image png;
    memset(&png, 0, sizeof png);
    png.version = PNG_IMAGE_VERSION;
    png.width = (png_uint_32)width;
    png.height = (png_uint_32)height;
    png.format = PNG_FORMAT_BGR;
    /* speed over size: a picture is written once and seldom kept long */
    png.flags = PNG_IMAGE_FLAG_FAST;
    png_alloc_size_t size = 0;
    int rc = -1;
    /* First the size, then the bytes (libpng's two-call pattern). */
    if (png_image_write_to_memory(&png, NULL, &size, 0, bgr, stride, NULL) && size > 0) {
        *data = malloc(size);
        if (*data && png_image_write_to_memory(&png, *data, &size, 0, bgr, stride, NULL)) {
            *len = size;
            rc = 0;
        }
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot encode the picture as PNG: %s",
                 png.warning_or_error ? png.message : "out of memory");
        free(*data);
        *data = NULL;
    }
    png_image_free(&png);
    return rc;
}
