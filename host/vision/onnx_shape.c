#include "vision/onnx_shape.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A slice of protobuf bytes. */
typedef struct pb {
    const unsigned char *p, *end;
} pb;

static int pb_varint(pb *b, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
        unsigned char c = *b->p++;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return 0;
    }
    return -1;
}

/* Reads one field: a varint's value into VAL, a length-delimited body into
 * SUB; other wire types are skipped. Returns the field number, 0 at the end,
 * or -1 on malformed input. */
static int pb_field(pb *b, int *wire, pb *sub, uint64_t *val)
{
    uint64_t key, v;
    if (b->p >= b->end) return 0;
    if (pb_varint(b, &key) != 0) return -1;
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0:
        if (pb_varint(b, val) != 0) return -1;
        break;
    case 1:
        if (b->end - b->p < 8) return -1;
        b->p += 8;
        break;
    case 2:
        if (pb_varint(b, &v) != 0 || v > (uint64_t)(b->end - b->p)) return -1;
        sub->p = b->p;
        sub->end = b->p + v;
        b->p += v;
        break;
    case 5:
        if (b->end - b->p < 4) return -1;
        b->p += 4;
        break;
    default: return -1;
    }
    return (int)(key >> 3);
}

/* The first length-delimited field number FIELD of B, into OUT. */
static int pb_find(pb b, int field, pb *out)
{
    int f, wire;
    pb sub;
    uint64_t v;
    while ((f = pb_field(&b, &wire, &sub, &v)) > 0)
        if (f == field && wire == 2) {
            *out = sub;
            return 0;
        }
    return -1;
}

/* TensorShapeProto: repeated Dimension dim = 1 { int64 dim_value = 1; }. */
static int shape_dims(pb shape, long dims[4])
{
    int n = 0, f, wire;
    pb dim;
    uint64_t unused;
    while ((f = pb_field(&shape, &wire, &dim, &unused)) > 0) {
        if (f != 1 || wire != 2) continue;
        if (n == 4) return -1;
        long value = -1;
        int g, w2;
        pb skip;
        uint64_t v;
        while ((g = pb_field(&dim, &w2, &skip, &v)) > 0)
            if (g == 1 && w2 == 0 && v <= 1u << 30) value = (long)v;
        dims[n++] = value;
    }
    return f < 0 ? -1 : n;
}

int vision_onnx_input_size(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len)) && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (!buf) return -1;
    int rc = vision_onnx_input_size_mem(buf, (size_t)len, w, h);
    free(buf);
    return rc;
}

int vision_onnx_input_size_mem(const unsigned char *data, size_t len, int *w, int *h)
{
    /* ModelProto.graph = 7; GraphProto.input = 11; ValueInfoProto.type = 2;
     * TypeProto.tensor_type = 1; Tensor.shape = 2. */
    pb model = {data, data + len}, graph, input, type, tensor, shape;
    long dims[4];
    int rc = -1;
    if (pb_find(model, 7, &graph) == 0 && pb_find(graph, 11, &input) == 0 &&
        pb_find(input, 2, &type) == 0 && pb_find(type, 1, &tensor) == 0 &&
        pb_find(tensor, 2, &shape) == 0 && shape_dims(shape, dims) == 4 && dims[2] > 0 &&
        dims[3] > 0 && dims[2] <= 8192 && dims[3] <= 8192) {
        *h = (int)dims[2];
        *w = (int)dims[3];
        rc = 0;
    }
    return rc;
}
