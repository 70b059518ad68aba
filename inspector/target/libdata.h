/* Which libraries' writable data culeak never reads. A CUDA torch process has libraries of its
 * own that touched much writable memory (libcublasLt's .bss: 84 of the 280 MB the copy took
 * without a GPU) and hold nothing culeak reads: no Python object lies there (a library that holds
 * one defines or calls Python's C API) and no state of torch's (a library that holds some defines
 * or calls torch's C++). The copy leaves such data out (target/freeze.h). */
#ifndef CULEAK_TARGET_LIBDATA_H
#define CULEAK_TARGET_LIBDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A writable PT_LOAD segment of a library: where it lies in the file and, less the load bias,
 * in memory (its .bss the memory past filesz). */
struct cl_lib_segment {
    uint64_t offset, vaddr, filesz, memsz;
};

#define CL_LIB_SEGMENTS 4

/* Libraries with less writable memory than this are kept whatever they are: there is little to
 * save, and libc, whose __environ culeak reads (runtime/rank.c), is among them. */
#define CL_LIBDATA_MIN_BYTES (1u << 20)

/* Whether the ELF library in fd is foreign to culeak: its writable segments (at most
 * CL_LIB_SEGMENTS, into seg and *n) hold CL_LIBDATA_MIN_BYTES or more of memory, and none of its
 * dynamic symbols, defined or imported, is Python's (Py*, _Py*) or in torch's C++ namespaces
 * (c10, torch). false for anything else, a program (one with an interpreter) or a file that is
 * no such ELF library included: its data is then copied. */
bool cl_libdata_foreign(int fd, struct cl_lib_segment *seg, size_t *n);

#endif
