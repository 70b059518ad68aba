#include "cpython/debug_offsets.h"

#include <stddef.h>
#include <string.h>

/* One uint64 of _Py_DebugOffsets that gives a layout field: where it sits in the struct, where
 * the size of the CPython struct it describes sits (the bound it is checked against), and the
 * py_layout field it fills. */
struct debug_field {
    uint16_t pos, size_pos;
    size_t at;                  /* offsetof(struct py_layout, ...), a uint16_t */
    const char *name;
    bool is_size;               /* the value is a size (at most the bound), not an offset in it */
};

/* The layout of _Py_DebugOffsets itself, read off the DWARF of a release, for the releases from
 * `first` (a PY_VERSION_HEX) to `last`: the struct has no size of its own, so the version in its
 * head is all that tells one layout from another. Only final releases are covered: an alpha,
 * beta or candidate may have had another layout, which culeak has not seen. */
struct debug_layout {
    uint32_t first, last;
    size_t size;
    uint16_t pyobject;          /* where pyobject.size sits: the identity check */
    const struct debug_field *fields;
    size_t n;
};

/* clang-format off */
#define D(pos, size_pos, field, name) \
    {pos, size_pos, offsetof(struct py_layout, field), name, false}
#define S(pos, size_pos, field, name) \
    {pos, size_pos, offsetof(struct py_layout, field), name, true}

/* 3.13.0, 3.13.5 and 3.13.18 (the same struct in each). */
static const struct debug_field fields_313[] = {
    D(40, 24, rt_interpreters_head, "runtime_state.interpreters_head"),
    D(64, 48, is_next, "interpreter_state.next"),
    D(72, 48, is_threads_head, "interpreter_state.threads_head"),
    D(80, 48, is_gc, "interpreter_state.gc"),
    D(88, 48, is_modules, "interpreter_state.imports_modules"),
    D(96, 48, is_sysdict, "interpreter_state.sysdict"),
    D(104, 48, is_builtins, "interpreter_state.builtins"),
    D(168, 152, ts_next, "thread_state.next"),
    D(176, 152, ts_interp, "thread_state.interp"),
    D(184, 152, ts_current_frame, "thread_state.current_frame"),
    D(192, 152, ts_thread_id, "thread_state.thread_id"),
    D(200, 152, ts_native_thread_id, "thread_state.native_thread_id"),
    D(232, 224, if_previous, "interpreter_frame.previous"),
    D(240, 224, if_code, "interpreter_frame.executable"),
    D(248, 224, if_instr, "interpreter_frame.instr_ptr"),
    D(256, 224, if_localsplus, "interpreter_frame.localsplus"),
    D(264, 224, if_owner, "interpreter_frame.owner"),
    D(280, 272, co_filename, "code_object.filename"),
    D(288, 272, co_name, "code_object.name"),
    D(296, 272, co_qualname, "code_object.qualname"),
    D(304, 272, co_linetable, "code_object.linetable"),
    D(312, 272, co_firstlineno, "code_object.firstlineno"),
    D(328, 272, co_localsplusnames, "code_object.localsplusnames"),
    D(336, 272, co_localspluskinds, "code_object.localspluskinds"),
    D(344, 272, co_code_adaptive, "code_object.co_code_adaptive"),
    D(360, 352, ob_type, "pyobject.ob_type"),
    D(376, 368, tp_name, "type_object.tp_name"),
    D(392, 368, tp_flags, "type_object.tp_flags"),
    D(408, 400, tuple_items, "tuple_object.ob_item"),
    D(416, 400, ob_size, "tuple_object.ob_size"),
    D(432, 424, list_items, "list_object.ob_item"),
    D(440, 424, ob_size, "list_object.ob_size"),
    D(456, 448, dict_keys, "dict_object.ma_keys"),
    D(464, 448, dict_values, "dict_object.ma_values"),
    D(480, 472, float_value, "float_object.ob_fval"),
    D(504, 488, long_digits, "long_object.ob_digit"),
    D(520, 512, ob_size, "bytes_object.ob_size"),
    D(528, 512, bytes_data, "bytes_object.ob_sval"),
    D(544, 536, str_state, "unicode_object.state"),
    D(552, 536, str_length, "unicode_object.length"),
    S(560, 536, ascii_data, "unicode_object.asciiobject_size"),
    D(576, 568, gc_collecting, "gc.collecting"),
};

/* 3.14.10: threads_main, code_object_generation, the stack pointer, set and generator objects
 * and the free-threading fields come in between. */
static const struct debug_field fields_314[] = {
    D(40, 24, rt_interpreters_head, "runtime_state.interpreters_head"),
    D(64, 48, is_next, "interpreter_state.next"),
    D(72, 48, is_threads_head, "interpreter_state.threads_head"),
    D(88, 48, is_gc, "interpreter_state.gc"),
    D(96, 48, is_modules, "interpreter_state.imports_modules"),
    D(104, 48, is_sysdict, "interpreter_state.sysdict"),
    D(112, 48, is_builtins, "interpreter_state.builtins"),
    D(192, 176, ts_next, "thread_state.next"),
    D(200, 176, ts_interp, "thread_state.interp"),
    D(208, 176, ts_current_frame, "thread_state.current_frame"),
    D(216, 176, ts_thread_id, "thread_state.thread_id"),
    D(224, 176, ts_native_thread_id, "thread_state.native_thread_id"),
    D(256, 248, if_previous, "interpreter_frame.previous"),
    D(264, 248, if_code, "interpreter_frame.executable"),
    D(272, 248, if_instr, "interpreter_frame.instr_ptr"),
    D(280, 248, if_localsplus, "interpreter_frame.localsplus"),
    D(288, 248, if_owner, "interpreter_frame.owner"),
    D(296, 248, if_stackpointer, "interpreter_frame.stackpointer"),
    D(320, 312, co_filename, "code_object.filename"),
    D(328, 312, co_name, "code_object.name"),
    D(336, 312, co_qualname, "code_object.qualname"),
    D(344, 312, co_linetable, "code_object.linetable"),
    D(352, 312, co_firstlineno, "code_object.firstlineno"),
    D(368, 312, co_localsplusnames, "code_object.localsplusnames"),
    D(376, 312, co_localspluskinds, "code_object.localspluskinds"),
    D(384, 312, co_code_adaptive, "code_object.co_code_adaptive"),
    D(408, 400, ob_type, "pyobject.ob_type"),
    D(424, 416, tp_name, "type_object.tp_name"),
    D(440, 416, tp_flags, "type_object.tp_flags"),
    D(456, 448, tuple_items, "tuple_object.ob_item"),
    D(464, 448, ob_size, "tuple_object.ob_size"),
    D(480, 472, list_items, "list_object.ob_item"),
    D(488, 472, ob_size, "list_object.ob_size"),
    D(512, 496, set_table, "set_object.table"),
    D(520, 496, set_mask, "set_object.mask"),
    D(536, 528, dict_keys, "dict_object.ma_keys"),
    D(544, 528, dict_values, "dict_object.ma_values"),
    D(560, 552, float_value, "float_object.ob_fval"),
    D(584, 568, long_digits, "long_object.ob_digit"),
    D(600, 592, ob_size, "bytes_object.ob_size"),
    D(608, 592, bytes_data, "bytes_object.ob_sval"),
    D(624, 616, str_state, "unicode_object.state"),
    D(632, 616, str_length, "unicode_object.length"),
    S(640, 616, ascii_data, "unicode_object.asciiobject_size"),
    D(656, 648, gc_collecting, "gc.collecting"),
    D(680, 664, gen_iframe, "gen_object.gi_iframe"),
    D(688, 664, gen_frame_state, "gen_object.gi_frame_state"),
};

/* 3.15.2: last_profiled_frame and its sequence, co_tlbc, the heap type object and the GC's
 * frame and generation statistics come in between. */
static const struct debug_field fields_315[] = {
    D(40, 24, rt_interpreters_head, "runtime_state.interpreters_head"),
    D(64, 48, is_next, "interpreter_state.next"),
    D(72, 48, is_threads_head, "interpreter_state.threads_head"),
    D(88, 48, is_gc, "interpreter_state.gc"),
    D(96, 48, is_modules, "interpreter_state.imports_modules"),
    D(104, 48, is_sysdict, "interpreter_state.sysdict"),
    D(112, 48, is_builtins, "interpreter_state.builtins"),
    D(192, 176, ts_next, "thread_state.next"),
    D(200, 176, ts_interp, "thread_state.interp"),
    D(208, 176, ts_current_frame, "thread_state.current_frame"),
    D(240, 176, ts_thread_id, "thread_state.thread_id"),
    D(248, 176, ts_native_thread_id, "thread_state.native_thread_id"),
    D(288, 176, ts_current_exception, "thread_state.current_exception"),
    D(320, 312, if_previous, "interpreter_frame.previous"),
    D(328, 312, if_code, "interpreter_frame.executable"),
    D(336, 312, if_instr, "interpreter_frame.instr_ptr"),
    D(344, 312, if_localsplus, "interpreter_frame.localsplus"),
    D(352, 312, if_owner, "interpreter_frame.owner"),
    D(360, 312, if_stackpointer, "interpreter_frame.stackpointer"),
    D(384, 376, co_filename, "code_object.filename"),
    D(392, 376, co_name, "code_object.name"),
    D(400, 376, co_qualname, "code_object.qualname"),
    D(408, 376, co_linetable, "code_object.linetable"),
    D(416, 376, co_firstlineno, "code_object.firstlineno"),
    D(432, 376, co_localsplusnames, "code_object.localsplusnames"),
    D(440, 376, co_localspluskinds, "code_object.localspluskinds"),
    D(448, 376, co_code_adaptive, "code_object.co_code_adaptive"),
    D(472, 464, ob_type, "pyobject.ob_type"),
    D(488, 480, tp_name, "type_object.tp_name"),
    D(504, 480, tp_flags, "type_object.tp_flags"),
    D(512, 480, tp_basicsize, "type_object.tp_basicsize"),
    D(520, 480, tp_dictoffset, "type_object.tp_dictoffset"),
    D(536, 528, ht_cached_keys, "heap_type_object.ht_cached_keys"),
    D(552, 544, tuple_items, "tuple_object.ob_item"),
    D(560, 544, ob_size, "tuple_object.ob_size"),
    D(576, 568, list_items, "list_object.ob_item"),
    D(584, 568, ob_size, "list_object.ob_size"),
    D(608, 592, set_table, "set_object.table"),
    D(616, 592, set_mask, "set_object.mask"),
    D(632, 624, dict_keys, "dict_object.ma_keys"),
    D(640, 624, dict_values, "dict_object.ma_values"),
    D(656, 648, float_value, "float_object.ob_fval"),
    D(680, 664, long_digits, "long_object.ob_digit"),
    D(696, 688, ob_size, "bytes_object.ob_size"),
    D(704, 688, bytes_data, "bytes_object.ob_sval"),
    D(720, 712, str_state, "unicode_object.state"),
    D(728, 712, str_length, "unicode_object.length"),
    S(736, 712, ascii_data, "unicode_object.asciiobject_size"),
    D(760, 752, gc_collecting, "gc.collecting"),
    D(800, 792, gen_name, "gen_object.gi_name"),
    D(808, 792, gen_iframe, "gen_object.gi_iframe"),
    D(816, 792, gen_frame_state, "gen_object.gi_frame_state"),
};

static const struct debug_layout layouts[] = {
    {0x030d00f0, 0x030dffff, 584, 352, fields_313, sizeof fields_313 / sizeof *fields_313},
    {0x030e00f0, 0x030effff, 760, 400, fields_314, sizeof fields_314 / sizeof *fields_314},
    {0x030f00f0, 0x030fffff, 888, 464, fields_315, sizeof fields_315 / sizeof *fields_315},
};
/* clang-format on */

#define STRUCT_SIZE_MAX (1u << 24)   /* the biggest, PyInterpreterState, is under 200 KiB */

static uint64_t u64_at(const struct py_debug_offsets *d, size_t pos)
{
    uint64_t v;
    memcpy(&v, d->raw + pos, sizeof v);
    return v;
}

static const struct debug_layout *layout_of(uint64_t version_hex)
{
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (version_hex >= layouts[i].first && version_hex <= layouts[i].last)
            return &layouts[i];
    return NULL;
}

/* PY_VERSION_HEX as Python spells the release: 3.15.0b2, 3.15.2. */
static void version_name(uint64_t hex, char *buf, size_t cap)
{
    static const char *const levels[16] = {[0xa] = "a", [0xb] = "b", [0xc] = "rc"};
    unsigned level = (hex >> 4) & 0xf, serial = hex & 0xf;
    int n = snprintf(buf, cap, "%u.%u.%u", (unsigned)(hex >> 24) & 0xff,
                     (unsigned)(hex >> 16) & 0xff, (unsigned)(hex >> 8) & 0xff);
    if (level != 0xf && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "%s%u", levels[level] ? levels[level] : "?", serial);
}

/* Every value lies inside the struct whose size the debug offsets also state, fits a table field,
 * and fields given twice (ob_size by tuple, list and bytes) agree. */
static int check_fields(const struct py_debug_offsets *d, const struct debug_layout *dl,
                        struct cl_error *err)
{
    for (size_t i = 0; i < dl->n; i++) {
        const struct debug_field *f = &dl->fields[i];
        uint64_t v = u64_at(d, f->pos), bound = u64_at(d, f->size_pos);
        bool outside = f->is_size ? v > bound : v >= bound;
        if (bound == 0 || bound > STRUCT_SIZE_MAX || v >= PY_NONE || outside)
            return cl_error_set(err, CL_E_UNSUPPORTED,
                                "the runtime's _Py_DebugOffsets does not "
                                "check out: %s is %llu, its struct's size %llu",
                                f->name, (unsigned long long)v, (unsigned long long)bound);
        for (size_t j = 0; j < i; j++)
            if (dl->fields[j].at == f->at && u64_at(d, dl->fields[j].pos) != v)
                return cl_error_set(err, CL_E_UNSUPPORTED,
                                    "the runtime's _Py_DebugOffsets does "
                                    "not check out: %s and %s disagree",
                                    dl->fields[j].name, f->name);
    }
    return 0;
}

int py_debug_offsets_read(struct cl_target *t, uint64_t runtime_addr, unsigned minor,
                          struct py_debug_offsets *d, struct cl_error *err)
{
    memset(d, 0, sizeof *d);
    unsigned char head[PY_DEBUG_HEAD_SIZE];
    if (cl_read(t, runtime_addr, head, sizeof head) != 0 ||
        memcmp(head, PY_DEBUG_COOKIE, PY_DEBUG_COOKIE_SIZE) != 0)
        return 0;
    memcpy(&d->version_hex, head + PY_DEBUG_VERSION, sizeof d->version_hex);
    if (((d->version_hex >> 24) & 0xff) != 3 || ((d->version_hex >> 16) & 0xff) != minor)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the runtime's _Py_DebugOffsets says version "
                            "0x%llx, not 3.%u",
                            (unsigned long long)d->version_hex, minor);
    const struct debug_layout *dl = layout_of(d->version_hex);
    if (!dl) {
        char name[32];
        version_name(d->version_hex, name, sizeof name);
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "culeak does not know the _Py_DebugOffsets of Python %s "
                            "(PY_VERSION_HEX 0x%08llx): it reads those of the final releases "
                            "of 3.13, 3.14 and 3.15",
                            name, (unsigned long long)d->version_hex);
    }
    if (cl_read(t, runtime_addr, d->raw, dl->size) != 0)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the runtime's _Py_DebugOffsets (%zu bytes at "
                            "0x%llx) cannot be read",
                            dl->size, (unsigned long long)runtime_addr);
    d->free_threaded = u64_at(d, PY_DEBUG_FREE_THREADED);
    /* A default build's PyObject is {ob_refcnt, ob_type}: 16 bytes, the type at 8. Read at the
     * wrong positions, these two are the first to disagree. */
    size_t pos = dl->pyobject;
    if (u64_at(d, pos) != 16 || u64_at(d, pos + 8) != 8)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the runtime's _Py_DebugOffsets does not "
                            "check out: PyObject is %llu bytes with its type at %llu",
                            (unsigned long long)u64_at(d, pos),
                            (unsigned long long)u64_at(d, pos + 8));
    int rc = check_fields(d, dl, err);
    if (rc)
        return rc;
    d->size = dl->size;
    return 0;
}

void py_debug_offsets_fill(const struct py_debug_offsets *d, struct py_layout *l)
{
    const struct debug_layout *dl = d->size ? layout_of(d->version_hex) : NULL;
    for (size_t i = 0; dl && i < dl->n; i++) {
        uint16_t v = (uint16_t)u64_at(d, dl->fields[i].pos);   /* < PY_NONE: checked on read */
        memcpy((char *)l + dl->fields[i].at, &v, sizeof v);
    }
}

unsigned py_debug_offsets_compare(const struct py_debug_offsets *d, const struct py_layout *l,
                                  FILE *out, unsigned *checked)
{
    const struct debug_layout *dl = d->size ? layout_of(d->version_hex) : NULL;
    unsigned bad = 0;
    *checked = 0;
    for (size_t i = 0; dl && i < dl->n; i++) {
        uint16_t want;
        uint64_t have = u64_at(d, dl->fields[i].pos);
        memcpy(&want, (const char *)l + dl->fields[i].at, sizeof want);
        (*checked)++;
        if (have == want)
            continue;
        bad++;
        if (out)
            fprintf(out, "MISMATCH  _Py_DebugOffsets.%s: table %u, runtime %llu\n",
                    dl->fields[i].name, want, (unsigned long long)have);
    }
    return bad;
}
