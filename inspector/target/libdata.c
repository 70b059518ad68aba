#include "target/libdata.h"

#include <gelf.h>
#include <string.h>

/* Whether a dynamic symbol's name ties its library to Python or to torch's C++ (mangled names
 * of the namespaces c10 and torch hold "3c10" and "5torch"). */
static bool ours(const char *name)
{
    return strncmp(name, "Py", 2) == 0 || strncmp(name, "_Py", 3) == 0 ||
           strstr(name, "3c10") != NULL || strstr(name, "5torch") != NULL;
}

static bool writable_segments(Elf *elf, struct cl_lib_segment *seg, size_t *n)
{
    size_t phnum;
    uint64_t memory = 0;
    *n = 0;
    if (elf_getphdrnum(elf, &phnum) != 0)
        return false;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            return false;
        if (ph.p_type == PT_INTERP)   /* a program (a PIE is ET_DYN too): the target's own */
            return false;
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W))
            continue;
        if (*n == CL_LIB_SEGMENTS || ph.p_filesz > ph.p_memsz)
            return false;
        seg[(*n)++] = (struct cl_lib_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz};
        memory += ph.p_memsz;
    }
    return memory >= CL_LIBDATA_MIN_BYTES;
}

/* Whether any dynamic symbol of elf is ours(); true where the table cannot be read. */
static bool names_ours(Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !sh.sh_entsize)
            return true;
        size_t count = sh.sh_size / sh.sh_entsize;
        for (size_t i = 1; i < count; i++) {
            GElf_Sym sym;
            const char *name;
            if (!gelf_getsym(data, (int)i, &sym) ||
                !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
                return true;
            if (ours(name))
                return true;
        }
        return false;
    }
    return true;   /* no dynamic symbols: no library */
}

bool cl_libdata_foreign(int fd, struct cl_lib_segment *seg, size_t *n)
{
    *n = 0;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return false;
    /* read, not mapped: a file cut short meanwhile fails a read rather than raising SIGBUS */
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    bool foreign = elf && gelf_getehdr(elf, &eh) && eh.e_type == ET_DYN &&
                   writable_segments(elf, seg, n) && !names_ours(elf);
    if (elf)
        elf_end(elf);
    if (!foreign)
        *n = 0;
    return foreign;
}
