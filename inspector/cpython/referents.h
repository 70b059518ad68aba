/* Strong references held by each kind of object (referents.c): the out-of-process counterpart of
 * tp_traverse, sent to an emitter (cpython/heap.h). */
#ifndef CULEAK_CPYTHON_REFERENTS_H
#define CULEAK_CPYTHON_REFERENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/emit.h"

/* Emits every strong reference of obj, whose type is ty (not const: the type's __slots__ are
 * computed and cached in it on first use). */
void py_referents(struct py_emitter *e, uint64_t obj, struct py_type *ty);
/* Iterates a dict's live entries; fn returns false to stop. False when they cannot be read. */
bool py_dict_items(struct py_objects *o, uint64_t dict,
                   bool (*fn)(void *arg, uint64_t key, uint64_t value), void *arg);
/* Adds a warning to *notes saying how many containers of which kinds the graph walk could not
 * read the contents of (nothing when it read them all). */
void py_referents_note_skipped(const struct py_objects *o, char **notes);

#endif
