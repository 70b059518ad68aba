#include "symbols/dwarf.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <string.h>

#define MAX_TYPE_HOPS 16   /* typedef/const/volatile chains; a bound against cyclic DWARF */

/* Follows typedefs and qualifiers to the underlying type. */
static bool strip_type(Dwarf_Die *die)
{
    for (int i = 0; i < MAX_TYPE_HOPS; i++) {
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
            return true;
        Dwarf_Attribute a;
        if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
            return false;
    }
    return false;
}

static bool is_aggregate(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) &&
           !dwarf_hasattr(die, DW_AT_declaration);
}

static bool find_type(const struct cl_module *m, const char *name, Dwarf_Die *out)
{
    Dwarf_Addr bias;
    if (!m->dwfl || !dwfl_module_getdwarf(m->dwfl, &bias))
        return false;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(m->dwfl, cu, &bias));) {
        Dwarf_Die d;
        if (dwarf_child(cu, &d) != 0)
            continue;
        do {
            int tag = dwarf_tag(&d);
            const char *n = dwarf_diename(&d);
            if (!n || strcmp(n, name) != 0 ||
                (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_typedef))
                continue;
            Dwarf_Die t = d;
            if (strip_type(&t) && is_aggregate(&t)) {
                *out = t;
                return true;
            }
        } while (dwarf_siblingof(&d, &d) == 0);
    }
    return false;
}

static uint64_t member_location(Dwarf_Die *member)
{
    Dwarf_Attribute a;
    Dwarf_Word off = 0;
    if (dwarf_attr(member, DW_AT_data_member_location, &a))
        dwarf_formudata(&a, &off);   /* union members have none: offset 0 */
    return off;
}

/* Looks for a member named name[0..len) in agg, descending into anonymous members. */
static bool find_member(Dwarf_Die *agg, const char *name, size_t len, uint64_t *off,
                        Dwarf_Die *type, int depth)
{
    Dwarf_Die m;
    if (depth > MAX_TYPE_HOPS || dwarf_child(agg, &m) != 0)
        return false;
    do {
        if (dwarf_tag(&m) != DW_TAG_member)
            continue;
        const char *n = dwarf_diename(&m);
        Dwarf_Attribute a;
        Dwarf_Die t;
        if (!dwarf_attr_integrate(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
            continue;
        if (n && strlen(n) == len && strncmp(n, name, len) == 0) {
            *off = member_location(&m);
            *type = t;
            return true;
        }
        uint64_t inner;
        if (!n && strip_type(&t) && is_aggregate(&t) &&
            find_member(&t, name, len, &inner, type, depth + 1)) {
            *off = member_location(&m) + inner;
            return true;
        }
    } while (dwarf_siblingof(&m, &m) == 0);
    return false;
}

static bool type_size(const struct cl_module *m, const char *type, uint64_t *size)
{
    Dwarf_Die t;
    int n;
    if (!find_type(m, type, &t) || (n = dwarf_bytesize(&t)) < 0)
        return false;
    *size = (uint64_t)n;
    return true;
}

static bool member_offset(const struct cl_module *m, const char *type, const char *member,
                          uint64_t *offset)
{
    Dwarf_Die t;
    if (!find_type(m, type, &t))
        return false;
    uint64_t total = 0;
    for (const char *p = member; *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        uint64_t off;
        Dwarf_Die mt;
        if (!strip_type(&t) || !is_aggregate(&t) || !find_member(&t, p, len, &off, &mt, 0))
            return false;
        total += off;
        t = mt;
        p += len + (dot ? 1 : 0);
    }
    *offset = total;
    return true;
}

/* Both answers are one number: a dump gives the recorded one (symbols.h). */
static bool answer(const struct cl_module *m, const char *type, const char *member, uint64_t *out)
{
    struct cl_symq q =
        cl_symbols_question(m, member ? CL_SYMQ_DWARF_MEMBER : CL_SYMQ_DWARF_SIZE, type, member);
    if (!cl_symbols_recorded(m->owner, &q)) {
        q.found = member ? member_offset(m, type, member, &q.v1) : type_size(m, type, &q.v1);
        cl_symbols_answered(m->owner, &q);
    }
    if (q.found)
        *out = q.v1;
    return q.found;
}

bool cl_dwarf_unasked(const struct cl_module *m, const char *type, const char *member)
{
    struct cl_symq q =
        cl_symbols_question(m, member ? CL_SYMQ_DWARF_MEMBER : CL_SYMQ_DWARF_SIZE, type, member);
    return m->owner->replay && !cl_symrec_find(&m->owner->rec, &q);
}

bool cl_dwarf_type_size(const struct cl_module *m, const char *type, uint64_t *size)
{
    return answer(m, type, NULL, size);
}

bool cl_dwarf_member_offset(const struct cl_module *m, const char *type, const char *member,
                            uint64_t *offset)
{
    return answer(m, type, member, offset);
}
