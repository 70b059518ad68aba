#include "runtime/python.h"

#include "cpython/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

#define BANNER_SCAN_MAX (64u << 20)   /* .data + .bss of a static python are a few MiB */

void cl_python_version_string(uint64_t hex, char *out, size_t cap)
{
    unsigned major = (hex >> 24) & 0xff, minor = (hex >> 16) & 0xff, micro = (hex >> 8) & 0xff;
    unsigned level = (hex >> 4) & 0xf, serial = hex & 0xf;
    const char *lv = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";
    if (level == 0xf || !*lv)
        snprintf(out, cap, "%u.%u.%u", major, minor, micro);
    else
        snprintf(out, cap, "%u.%u.%u%s%u", major, minor, micro, lv, serial);
}

static bool plausible(uint64_t hex)
{
    unsigned level = (hex >> 4) & 0xf;
    return (hex >> 24) == 3 && ((hex >> 16) & 0xff) <= 50 &&
           (level == 0xa || level == 0xb || level == 0xc || level == 0xf);
}

static size_t parse_num(const char *s, size_t len, size_t i, unsigned *v)
{
    size_t start = i;
    *v = 0;
    while (i < len && i - start < 3 && s[i] >= '0' && s[i] <= '9')
        *v = *v * 10 + (unsigned)(s[i++] - '0');
    return i - start;
}

uint64_t cl_python_parse_banner(const char *s, size_t len)
{
    unsigned major, minor, micro, serial = 0, level = 0xf;
    size_t i = 0, n;
    if (!(n = parse_num(s, len, i, &major)) || (i += n) >= len || s[i++] != '.' ||
        !(n = parse_num(s, len, i, &minor)) || (i += n) >= len || s[i++] != '.' ||
        !(n = parse_num(s, len, i, &micro)))
        return 0;
    i += n;
    if (i + 1 < len && (s[i] == 'a' || s[i] == 'b' || (s[i] == 'r' && s[i + 1] == 'c'))) {
        level = s[i] == 'a' ? 0xa : s[i] == 'b' ? 0xb : 0xc;
        i += level == 0xc ? 2 : 1;
        if (!(n = parse_num(s, len, i, &serial)))
            return 0;
        i += n;
    }
    if (i < len && s[i] == '+')
        i++;
    /* Free-threaded builds say so between the version and the build info. */
    static const char *const ft[] = {" experimental free-threading build", " free-threading build"};
    for (size_t k = 0; k < 2; k++)
        if (len - i > strlen(ft[k]) && strncmp(s + i, ft[k], strlen(ft[k])) == 0) {
            i += strlen(ft[k]);
            break;
        }
    if (i + 1 >= len || s[i] != ' ' || s[i + 1] != '(' || major != 3 || minor > 50 || micro > 99 ||
        serial > 15)
        return 0;
    return (uint64_t)major << 24 | minor << 16 | micro << 8 | level << 4 | serial;
}

/* sys.version's text lives in a static buffer in .bss (Python/getversion.c), filled at start-up. */
/* The version in the banner string (sys.version) in m's data, written to out; *hex is 0 when
 * there is none. Returns 0, or CL_E_INTERNAL when out of memory. */
static int scan_banner(struct cl_target *t, const struct cl_module *m, char *out, size_t cap,
                       uint64_t *hex)
{
    static const char *const sections[] = {".bss", ".data"};
    char *buf = malloc(1 << 16);
    uint64_t found = 0;
    *hex = 0;
    if (!buf)
        return CL_E_INTERNAL;
    for (size_t si = 0; !found && si < 2; si++) {
        uint64_t addr, size;
        if (!cl_module_section(m, sections[si], &addr, &size))
            continue;
        if (size > BANNER_SCAN_MAX)
            size = BANNER_SCAN_MAX;
        /* Chunks overlap by a banner's length so one straddling a boundary is still seen. */
        for (uint64_t off = 0; !found && off < size; off += (1 << 16) - 256) {
            size_t n = size - off < (1 << 16) ? (size_t)(size - off) : (1 << 16);
            if (cl_read(t, addr + off, buf, n) != 0)
                continue;
            for (size_t i = 0; i + 8 < n; i++) {
                if (buf[i] != '3' || buf[i + 1] != '.' || (i > 0 && buf[i - 1] != '\0'))
                    continue;
                if ((found = cl_python_parse_banner(buf + i, n - i))) {
                    size_t len = strnlen(buf + i, n - i);
                    cl_copy_span(out, cap, buf + i, len); /* cut to the build field */
                    for (char *c = out; *c; c++)
                        if (*c == '\n')
                            *c = ' '; /* 3.9 and 3.10 put the compiler on its own line */
                    break;
                }
            }
        }
    }
    free(buf);
    *hex = found;
    return 0;
}

static uint64_t version_from_name(const struct cl_module *m)
{
    const char *base = strrchr(m->path, '/');
    unsigned minor;
    base = base ? base + 1 : m->path;
    if (sscanf(base, "libpython3.%u", &minor) == 1 || sscanf(base, "python3.%u", &minor) == 1)
        return 3u << 24 | minor << 16;
    return 0;
}

/* The module holding _PyRuntime in *out (NULL when none does): 0, or CL_E_INTERNAL. */
static int find_runtime(struct cl_target *t, const struct cl_symbols *syms,
                        struct cl_python_info *info, const struct cl_module **out,
                        struct cl_error *err)
{
    *out = NULL;
    /* libpython first: an embedding executable links it rather than containing the runtime. */
    const struct cl_module *cands[2] = {cl_symbols_module_named(syms, "libpython3"), NULL};
    for (size_t i = 0; i < syms->n && t->exe_path; i++)
        if (strcmp(syms->mods[i].path, t->exe_path) == 0)
            cands[1] = &syms->mods[i];
    for (size_t i = 0; i < 2; i++) {
        const struct cl_module *m = cands[i];
        if (!m)
            continue;
        if (cl_module_symbol(m, "_PyRuntime", &info->runtime_addr, NULL))
            info->runtime_found_by = "symbol _PyRuntime";
        else if (cl_module_section(m, ".PyRuntime", &info->runtime_addr, NULL))
            info->runtime_found_by = "section .PyRuntime";
        else
            continue;
        info->shared = i == 0;
        *out = m;
        return 0;
    }
    /* Neither symbol nor section (a fully stripped build): look for the structure itself, in
     * libpython, or in an executable that is evidently Python by name. */
    for (size_t i = 0; i < 2; i++) {
        const struct cl_module *m = cands[i];
        const char *base = m ? strrchr(m->path, '/') : NULL;
        if (!m || m->state != CL_MODULE_OK || /* without the file, say which one is missing */
            (i == 1 && (!base || strncmp(base + 1, "python3", 7) != 0)))
            continue;
        uint64_t named = version_from_name(m);
        if (py_runtime_scan(t, m, (unsigned)(named >> 16) & 0xff, &info->runtime_addr))
            return cl_error_set(err, CL_E_INTERNAL, "out of memory scanning %s for _PyRuntime",
                                m->path);
        if (info->runtime_addr) {
            info->runtime_found_by = "scan of writable memory";
            info->shared = i == 0;
            *out = m;
            return 0;
        }
    }
    return 0;
}

static void agree(struct cl_python_info *info, const char *source)
{
    size_t n = strlen(info->confirmed_by);
    snprintf(info->confirmed_by + n, sizeof info->confirmed_by - n, "%s%s", n ? ", " : "", source);
}

/* Records one source's answer: the first becomes the version, later ones must agree with it. */
static int take(struct cl_python_info *info, const char *source, uint64_t hex, struct cl_error *err)
{
    if (!hex)
        return 0;
    if (!info->version_hex) {
        info->version_hex = hex;
        info->version_source = source;
        return 0;
    }
    bool minor_only = (info->version_hex & 0xffff) == 0 || (hex & 0xffff) == 0;
    uint64_t mask = minor_only ? 0xffff0000u : 0xffffffffu;
    if ((info->version_hex & mask) != (hex & mask)) {
        char a[24], b[24];
        cl_python_version_string(info->version_hex, a, sizeof a);
        cl_python_version_string(hex, b, sizeof b);
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the Python version is ambiguous: %s says %s, "
                            "%s says %s",
                            info->version_source, a, source, b);
    }
    agree(info, source);
    return 0;
}


/* Without the files a core was made from there are no symbols, which must not read as "not
 * Python": say which file is missing instead. */
static int no_runtime(struct cl_target *t, const struct cl_symbols *syms, struct cl_error *err)
{
    const struct cl_module *lib = cl_symbols_module_named(syms, "libpython3");
    for (size_t i = 0; i < syms->n; i++) {
        const struct cl_module *m = &syms->mods[i];
        bool is_exe = t->exe_path && strcmp(m->path, t->exe_path) == 0;
        if ((m == lib || (is_exe && !lib)) && m->state == CL_MODULE_MISSING)
            return cl_error_set(err, CL_E_IO,
                                "cannot look for the Python runtime: %s is not on "
                                "this machine (use --sysroot, --lib-path or --exe)",
                                m->path);
        /* Name the file that was found and refused: the target's path is the right one. */
        if ((m == lib || (is_exe && !lib)) && m->state != CL_MODULE_OK)
            return cl_error_set(err, CL_E_EXE_MISMATCH,
                                "cannot look for the Python runtime: %s "
                                "(found for %s) is another build, its build-id differs (use "
                                "--sysroot, --lib-path or --exe)",
                                m->file ? m->file : "?", m->path);
    }
    return cl_error_set(err, CL_E_NOT_PYTHON,
                        "%s is not a Python process: no CPython runtime "
                        "(_PyRuntime) in any loaded module",
                        t->exe_path ? t->exe_path : "the target");
}

int cl_python_detect(struct cl_target *t, const struct cl_symbols *syms,
                     struct cl_python_info *info, struct cl_error *err)
{
    memset(info, 0, sizeof *info);
    const struct cl_module *m;
    int rc = find_runtime(t, syms, info, &m, err);
    if (rc)
        return rc;
    if (!m)
        return no_runtime(t, syms, err);
    info->module = m;
    info->has_dwarf = cl_module_has_dwarf(m);
    info->has_symtab = cl_module_has_symtab(m);

    /* 3.13+: _Py_DebugOffsets opens _PyRuntime: the cookie, PY_VERSION_HEX, free_threaded. */
    unsigned char head[PY_DEBUG_HEAD_SIZE];
    if (cl_read(t, info->runtime_addr, head, sizeof head) == 0 &&
        memcmp(head, PY_DEBUG_COOKIE, PY_DEBUG_COOKIE_SIZE) == 0) {
        uint64_t hex, ft;
        memcpy(&hex, head + PY_DEBUG_VERSION, sizeof hex);
        memcpy(&ft, head + PY_DEBUG_FREE_THREADED, sizeof ft);
        if (plausible(hex) && (rc = take(info, "_Py_DebugOffsets", hex, err)))
            return rc;
        info->free_threaded = ft != 0;
    }
    uint64_t addr, hex;
    if (cl_module_symbol(m, "Py_Version", &addr, NULL) && cl_read_u64(t, addr, &hex) == 0 &&
        plausible(hex) && (rc = take(info, "Py_Version", hex, err)))
        return rc;
    uint64_t banner;
    if (scan_banner(t, m, info->build, sizeof info->build, &banner))
        return cl_error_set(err, CL_E_INTERNAL, "out of memory reading %s", m->path);
    if ((rc = take(info, "version string", banner, err)))
        return rc;
    if ((rc = take(info, "library name", version_from_name(m), err)))
        return rc;
    if (!info->version_hex)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "found a CPython runtime in %s but not its "
                            "version",
                            m->path);
    if (info->version_hex & 0xffff)
        cl_python_version_string(info->version_hex, info->version, sizeof info->version);
    else
        snprintf(info->version, sizeof info->version, "3.%u",
                 (unsigned)(info->version_hex >> 16) & 0xff);
    if (strstr(info->build, "free-threading"))
        info->free_threaded = true;
    return 0;
}
