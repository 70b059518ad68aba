#include "symbols/names.h"

#include <stdlib.h>
#include <string.h>

/* A symbol's index in the module's table (0, the null symbol, for an empty slot) and its name's
 * hash, so that a probe reads a symbol's name only when the hashes agree. */
struct cl_symname_slot {
    uint32_t index, hash;
};

static uint32_t hash_of(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static const char *defined(Dwfl_Module *mod, uint32_t i, GElf_Sym *sym, GElf_Addr *value)
{
    const char *name = dwfl_module_getsym_info(mod, (int)i, sym, value, NULL, NULL, NULL);
    return name && sym->st_shndx != SHN_UNDEF ? name : NULL;
}

/* The slot of name's first symbol, or the empty slot where it goes. */
static struct cl_symname_slot *probe(const struct cl_symnames *x, Dwfl_Module *mod,
                                     const char *name, uint32_t hash, GElf_Sym *sym,
                                     GElf_Addr *value)
{
    for (size_t i = hash & x->mask;; i = (i + 1) & x->mask) {
        struct cl_symname_slot *s = &x->slots[i];
        if (!s->index)
            return s;
        const char *have;
        if (s->hash == hash && (have = defined(mod, s->index, sym, value)) &&
            strcmp(have, name) == 0)
            return s;
    }
}

/* Every defined symbol's name, the first of each name kept; at most half the slots full. */
static bool build(struct cl_symnames *x, Dwfl_Module *mod)
{
    int n = dwfl_module_getsymtab(mod);
    size_t cap = 16;
    while (n > 0 && cap < 2 * (size_t)n)
        cap *= 2;
    if (!(x->slots = calloc(cap, sizeof *x->slots)))
        return false;
    x->mask = cap - 1;
    for (uint32_t i = 1; n > 0 && i < (uint32_t)n; i++) {
        GElf_Sym sym, other;
        GElf_Addr value, other_value;
        const char *name = defined(mod, i, &sym, &value);
        if (!name)
            continue;
        uint32_t hash = hash_of(name);
        struct cl_symname_slot *s = probe(x, mod, name, hash, &other, &other_value);
        if (!s->index)
            *s = (struct cl_symname_slot){i, hash};
    }
    return true;
}

/* Without a table (out of memory): every symbol looked at. */
static bool scan(Dwfl_Module *mod, const char *name, GElf_Sym *sym, GElf_Addr *value)
{
    int n = dwfl_module_getsymtab(mod);
    for (uint32_t i = 1; n > 0 && i < (uint32_t)n; i++) {
        const char *have = defined(mod, i, sym, value);
        if (have && strcmp(have, name) == 0)
            return true;
    }
    return false;
}

bool cl_symnames_find(struct cl_symnames *x, Dwfl_Module *mod, const char *name, GElf_Sym *sym,
                      GElf_Addr *value)
{
    if (!x->slots && !build(x, mod))
        return scan(mod, name, sym, value);
    return probe(x, mod, name, hash_of(name), sym, value)->index != 0;
}

void cl_symnames_free(struct cl_symnames *x)
{
    free(x->slots);
    *x = (struct cl_symnames){0};
}
