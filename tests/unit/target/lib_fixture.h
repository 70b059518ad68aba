/* A shared library made up for the tests (a fixture: the integration tests look at a CUDA torch
 * process's own libraries): an ELF header, one writable PT_LOAD (its file part the file's second
 * page, at virtual address LIB_VADDR, with memsz bytes of memory), and a dynamic symbol table of
 * the names given, all imported. */
#ifndef CULEAK_TESTS_LIB_FIXTURE_H
#define CULEAK_TESTS_LIB_FIXTURE_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LIB_FILE_SIZE 0x2000u
#define LIB_SEGMENT_OFFSET 0x1000u
#define LIB_VADDR 0x201000u
#define LIB_MAX_NAMES 8u
#define LIB_SHDRS 0x700u /* the section headers: none, .dynsym, .dynstr, .shstrtab */

/* Writes the library into out (LIB_FILE_SIZE bytes); with program, a program instead (a PIE:
 * the same with an interpreter). */
static inline void lib_fixture(unsigned char *out, uint64_t memsz, const char *const *names,
                               size_t n, bool program)
{
    enum { DYNSTR = 0x200, DYNSYM = 0x400, SHSTRTAB = 0x600 };
    memset(out, 0, LIB_FILE_SIZE);
    Elf64_Ehdr eh = {
        .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT},
        .e_type = ET_DYN,
        .e_machine = EM_X86_64,
        .e_version = EV_CURRENT,
        .e_phoff = sizeof eh,
        .e_shoff = LIB_SHDRS,
        .e_ehsize = sizeof eh,
        .e_phentsize = sizeof(Elf64_Phdr),
        .e_phnum = program ? 2 : 1,
        .e_shentsize = sizeof(Elf64_Shdr),
        .e_shnum = 4,
        .e_shstrndx = 3};
    memcpy(out, &eh, sizeof eh);
    Elf64_Phdr ph = {.p_type = PT_LOAD,
                     .p_flags = PF_R | PF_W,
                     .p_offset = LIB_SEGMENT_OFFSET,
                     .p_vaddr = LIB_VADDR,
                     .p_paddr = LIB_VADDR,
                     .p_filesz = LIB_FILE_SIZE - LIB_SEGMENT_OFFSET,
                     .p_memsz = memsz,
                     .p_align = 0x1000};
    memcpy(out + sizeof eh, &ph, sizeof ph);
    Elf64_Phdr interp = {.p_type = PT_INTERP, .p_flags = PF_R, .p_offset = 0x100, .p_filesz = 1};
    if (program)
        memcpy(out + sizeof eh + sizeof ph, &interp, sizeof interp);
    size_t str = 1;
    n = n < LIB_MAX_NAMES ? n : LIB_MAX_NAMES;
    for (size_t i = 0; i < n; i++) {
        Elf64_Sym sym = {.st_name = (uint32_t)str,
                         .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
                         .st_shndx = SHN_UNDEF};
        memcpy(out + DYNSYM + (i + 1) * sizeof sym, &sym, sizeof sym);
        size_t len = strnlen(names[i], 40);
        memcpy(out + DYNSTR + str, names[i], len);
        str += len + 1;
    }
    static const char shstrtab[] = "\0.dynsym\0.dynstr\0.shstrtab";
    memcpy(out + SHSTRTAB, shstrtab, sizeof shstrtab);
    Elf64_Shdr sh[4] = {{0},
                        {.sh_name = 1,
                         .sh_type = SHT_DYNSYM,
                         .sh_flags = SHF_ALLOC,
                         .sh_offset = DYNSYM,
                         .sh_size = (n + 1) * sizeof(Elf64_Sym),
                         .sh_link = 2,
                         .sh_info = 1,
                         .sh_addralign = 8,
                         .sh_entsize = sizeof(Elf64_Sym)},
                        {.sh_name = 9,
                         .sh_type = SHT_STRTAB,
                         .sh_flags = SHF_ALLOC,
                         .sh_offset = DYNSTR,
                         .sh_size = str,
                         .sh_addralign = 1},
                        {.sh_name = 17,
                         .sh_type = SHT_STRTAB,
                         .sh_offset = SHSTRTAB,
                         .sh_size = sizeof shstrtab,
                         .sh_addralign = 1}};
    memcpy(out + LIB_SHDRS, sh, sizeof sh);
}

#endif
