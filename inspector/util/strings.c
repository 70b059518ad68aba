#include "util/strings.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (1u << 20)

struct cl_strings_chunk {
    struct cl_strings_chunk *next;
    char text[];
};

const char *cl_strings_add(struct cl_strings *st, const char *s)
{
    size_t len = strlen(s) + 1;
    if (!st->chunks || st->cap - st->used < len) {
        size_t cap = len > CHUNK_BYTES ? len : CHUNK_BYTES;
        struct cl_strings_chunk *c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = st->chunks;
        st->chunks = c;
        st->used = 0;
        st->cap = cap;
    }
    char *copy = st->chunks->text + st->used;
    memcpy(copy, s, len);
    st->used += len;
    return copy;
}

void cl_strings_free(struct cl_strings *st)
{
    for (struct cl_strings_chunk *c = st->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    memset(st, 0, sizeof *st);
}
