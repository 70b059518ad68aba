/* Looking up dict entries by key. For code that asks many dicts many questions by a str key's
 * text (each module's parent package in sys.modules, then its attribute), py_strkeys reads each
 * dict once, then every lookup is a hash probe; a single lookup reads every key. */
#ifndef CULEAK_CPYTHON_STRKEYS_H
#define CULEAK_CPYTHON_STRKEYS_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/object.h"
#include "util/addrmap.h"

struct py_strkeys {
    struct py_objects *o;
    struct cl_addrmap indexed;   /* dict -> 0 once its str keys are in by_text */
    struct cl_addrmap by_text;   /* hash of (dict, key text) -> entries index, or ambiguous */
    struct py_strkey_entry {
        uint64_t dict, key, value;   /* key 0: two keys of the dict share the hash */
    } *entries;
    size_t n, cap;
};

/* The value for the str key `text` in dict, or 0 when it has none (or cannot be read). Exactly
 * what a read of every key would find: a hash shared by two keys falls back to that read. */
uint64_t py_strkeys_get(struct py_strkeys *k, uint64_t dict, const char *text);
/* The value by a read of every key, for a single lookup: of the str key `text`, of the int key
 * `key`; 0 when there is none. */
uint64_t py_dict_get_str(struct py_objects *o, uint64_t dict, const char *text);
uint64_t py_dict_get_int(struct py_objects *o, uint64_t dict, int64_t key);
void py_strkeys_free(struct py_strkeys *k);

#endif
