/* Str-keyed lookups in target dicts. A dict's keys are read once, into one hash map keyed by
 * the dict and the key's text; a lookup then verifies the key it finds by reading it again. */
#include "cpython/strkeys.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/referents.h"
#include "util/vec.h"

#define KEY_TEXT 256   /* longer keys are read truncated, as a scan reads them */

/* FNV-1a over the dict's address and the text; never 0 (the map's empty key). */
static uint64_t text_hash(uint64_t dict, const char *text)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (int i = 0; i < 8; i++)
        h = (h ^ ((dict >> (8 * i)) & 0xff)) * 0x100000001b3u;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h | 1;
}

/* A read of every key of a dict for the one that is want_text (a str) or want_int (an int). */
struct match {
    struct py_objects *o;
    const char *want_text;
    int64_t want_int;
    uint64_t found;
};

static bool match_key(void *arg, uint64_t key, uint64_t value)
{
    struct match *m = arg;
    char s[KEY_TEXT];
    int64_t v = 0;
    bool same;
    if (m->want_text)
        same = py_str_read(m->o, key, s, sizeof s) && strcmp(s, m->want_text) == 0;
    else
        same = py_int_read(m->o, key, &v) && v == m->want_int;
    if (same)
        m->found = value;
    return !same;
}

static uint64_t match_in(struct py_objects *o, uint64_t dict, struct match m)
{
    if (dict)
        py_dict_items(o, dict, match_key, &m);
    return m.found;
}

uint64_t py_dict_get_str(struct py_objects *o, uint64_t dict, const char *text)
{
    return match_in(o, dict, (struct match){o, text, 0, 0});
}

uint64_t py_dict_get_int(struct py_objects *o, uint64_t dict, int64_t key)
{
    return match_in(o, dict, (struct match){o, NULL, key, 0});
}

struct indexing {
    struct py_strkeys *k;
    uint64_t dict;
    bool ok;
};

/* Adds one key of x->dict; a key whose hash another key has marks that entry shared. A
 * failed allocation stops the indexing: that dict is then read whole at each lookup. */
static bool index_key(void *arg, uint64_t key, uint64_t value)
{
    struct indexing *x = arg;
    struct py_strkeys *k = x->k;
    char s[KEY_TEXT];
    if (!key || !py_str_read(k->o, key, s, sizeof s))
        return true;
    size_t slot;
    uint64_t hash = text_hash(x->dict, s);
    uint32_t at = cl_addrmap_find(&k->by_text, hash, &slot);
    if (at != UINT32_MAX) {
        k->entries[at].key = 0;
        return true;
    }
    if (slot == SIZE_MAX || k->n >= UINT32_MAX - 1 || !CL_VEC_RESERVE(k->entries, k->n, k->cap))
        return x->ok = false;
    cl_addrmap_insert_at(&k->by_text, slot, hash, (uint32_t)k->n);
    k->entries[k->n++] = (struct py_strkey_entry){x->dict, key, value};
    return true;
}

uint64_t py_strkeys_get(struct py_strkeys *k, uint64_t dict, const char *text)
{
    if (!dict)
        return 0;
    bool inserted;
    if (cl_addrmap_get(&k->indexed, dict) == UINT32_MAX) {
        struct indexing x = {k, dict, true};
        if (!py_dict_items(k->o, dict, index_key, &x) || !x.ok ||
            cl_addrmap_put(&k->indexed, dict, 0, &inserted) == UINT32_MAX)
            return py_dict_get_str(k->o, dict, text);   /* unindexed: the plain read */
    }
    uint32_t at = cl_addrmap_get(&k->by_text, text_hash(dict, text));
    if (at == UINT32_MAX)
        return 0;
    const struct py_strkey_entry *e = &k->entries[at];
    char s[KEY_TEXT];
    if (!e->key)   /* shared by two keys */
        return py_dict_get_str(k->o, dict, text);
    return e->dict == dict && py_str_read(k->o, e->key, s, sizeof s) && strcmp(s, text) == 0
               ? e->value
               : 0;
}

void py_strkeys_free(struct py_strkeys *k)
{
    cl_addrmap_free(&k->indexed);
    cl_addrmap_free(&k->by_text);
    free(k->entries);
    *k = (struct py_strkeys){.o = k->o};
}
