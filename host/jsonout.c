#include "jsonout.h"

#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Repairs the string *S owned by cJSON (or borrowed when OWNED is false). */
static int repair_string(char **s, bool owned)
{
    size_t n = strlen(*s);
    if (utf8_valid(*s, n)) return 0;
    char *fixed = utf8_repair(*s, n, cJSON_malloc, NULL);
    if (!fixed) return -1;
    if (owned) cJSON_free(*s);
    *s = fixed;
    return 0;
}

/* Repairs the name and the string value of IT itself. */
static int repair_item(cJSON *it)
{
    int rc = 0;
    if (it->string) {
        char *before = it->string;
        if (repair_string(&it->string, !(it->type & cJSON_StringIsConst))) rc = -1;
        if (it->string != before) it->type &= ~cJSON_StringIsConst;
    }
    if ((cJSON_IsString(it) || cJSON_IsRaw(it)) && it->valuestring) {
        char *before = it->valuestring;
        if (repair_string(&it->valuestring, !(it->type & cJSON_IsReference))) rc = -1;
        /* The repair is ours now: cJSON_Delete frees it. */
        if (it->valuestring != before) it->type &= ~cJSON_IsReference;
    }
    return rc;
}

int jsonout_repair(cJSON *doc)
{
    if (!doc) return 0;
    int rc = repair_item(doc);
    for (cJSON *c = doc->child; c; c = c->next)
        if (jsonout_repair(c)) rc = -1;
    return rc;
}

char *jsonout_print(cJSON *doc)
{
    if (jsonout_repair(doc)) return NULL;
    char *text = cJSON_PrintUnformatted(doc);
    if (!text) return NULL;
    /* Only strings hold bytes >= 0x7F (the JSON around them is ASCII), and
     * every string is valid UTF-8 now: a 0xC2 byte followed by 0x80-0x9F is
     * always a whole C1 character. */
    size_t n = 0, extra = 0;
    for (; text[n]; n++)
        if (text[n] == 0x7F)
            extra += 5;
        else if ((unsigned char)text[n] == 0xC2 && (unsigned char)text[n + 1] >= 0x80 &&
                 (unsigned char)text[n + 1] <= 0x9F)
            extra += 4;
    if (!extra) return text;
    char *out = malloc(n + extra + 1);
    if (!out) {
        free(text);
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == 0x7F) {
            o += (size_t)sprintf(out + o, "\\u007f");
        } else if (c == 0xC2 && (unsigned char)text[i + 1] >= 0x80 &&
                   (unsigned char)text[i + 1] <= 0x9F) {
            o += (size_t)sprintf(out + o, "\\u00%02x", (unsigned char)text[i + 1]);
            i++;
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    free(text);
    return out;
}
