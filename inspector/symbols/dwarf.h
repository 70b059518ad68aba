/* Struct layouts from a module's DWARF, when it has any: the check that layout tables (which
 * culeak needs for stripped binaries) say what the compiler said. */
#ifndef CULEAK_SYMBOLS_DWARF_H
#define CULEAK_SYMBOLS_DWARF_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/symbols.h"

/* sizeof(type): a struct/union tag or a typedef name. False without DWARF or without the type. */
bool cl_dwarf_type_size(const struct cl_module *m, const char *type, uint64_t *size);
/* offsetof(type, member), member a dotted path through nested and anonymous structs/unions
 * ("interpreters.head"). */
bool cl_dwarf_member_offset(const struct cl_module *m, const char *type, const char *member,
                            uint64_t *offset);
/* Whether m's answers come from a dump whose culeak never asked this (member NULL: the size):
 * an older culeak's dump, read by one that checks more. */
bool cl_dwarf_unasked(const struct cl_module *m, const char *type, const char *member);

#endif
