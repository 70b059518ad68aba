/* Finds the CPython runtime in a target without running code, and tells its version and how the
 * version was established. */
#ifndef CULEAK_RUNTIME_PYTHON_H
#define CULEAK_RUNTIME_PYTHON_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/symbols.h"

struct cl_python_info {
    const struct cl_module *module;   /* the ELF holding the interpreter: libpython or the exe */
    bool shared;                      /* libpython3.X.so rather than a static executable */
    uint64_t runtime_addr;            /* _PyRuntime */
    const char *runtime_found_by;     /* "symbol _PyRuntime", "section .PyRuntime" */
    uint64_t version_hex;             /* PY_VERSION_HEX; micro and level are 0 when unknown */
    char version[24]; /* "3.11.7", "3.13.0rc2", or "3.9" when only the minor is known */
    const char *version_source; /* the most direct source that answered */
    char confirmed_by[96]; /* other sources that agree, comma-separated */
    char build[160]; /* the interpreter's version banner (sys.version), if found */
    bool free_threaded;
    bool has_dwarf, has_symtab;
};

/* Fills info. Errors: CL_E_NOT_PYTHON when no runtime is found; CL_E_UNSUPPORTED when the sources
 * disagree about the version. */
int cl_python_detect(struct cl_target *t, const struct cl_symbols *syms,
                     struct cl_python_info *info, struct cl_error *err);

/* Decodes a PY_VERSION_HEX into "3.11.7" / "3.13.0rc2". Pure. */
void cl_python_version_string(uint64_t hex, char *out, size_t cap);
/* Parses a version banner's leading "3.11.7" / "3.13.0rc2" into a PY_VERSION_HEX; 0 if it is not
 * one. Pure. */
uint64_t cl_python_parse_banner(const char *s, size_t len);

#endif
