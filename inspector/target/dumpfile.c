#include "target/dumpfile.h"

#include <string.h>

#include "util/bytes.h"

bool cl_dumpfile_is_dump(const unsigned char *p, size_t len)
{
    return len >= CL_DUMP_MAGIC_LEN && memcmp(p, CL_DUMP_MAGIC, CL_DUMP_MAGIC_LEN) == 0;
}

static int parse_table(const unsigned char *p, size_t len, const char *name, uint64_t table,
                       uint32_t n, struct cl_dumpfile *out, struct cl_error *err)
{
    if (table < CL_DUMP_HEADER_SIZE || table > len || n > (len - table) / CL_DUMP_TABLE_ENTRY)
        return cl_error_set(err, CL_E_NOT_CORE,
                            "%s is a corrupt culeak dump: its section table "
                            "(%u entries at %llu) lies outside the file",
                            name, n, (unsigned long long)table);
    struct cl_bytes_in in = {p + table, (size_t)n * CL_DUMP_TABLE_ENTRY, 0, false, false};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cl_in_u32(&in);
        (void)cl_in_u32(&in);   /* reserved */
        uint64_t off = cl_in_u64(&in), slen = cl_in_u64(&in);
        if (id == 0 || id >= CL_DUMP_SECTION_IDS || out->has[id])
            return cl_error_set(
                err, CL_E_NOT_CORE,
                "%s is a corrupt culeak dump: section id %u "
                "is %s",
                name, id, id && id < CL_DUMP_SECTION_IDS ? "repeated" : "unknown to this culeak");
        if (off < CL_DUMP_HEADER_SIZE || off > len || slen > len - off)
            return cl_error_set(err, CL_E_NOT_CORE,
                                "%s is a corrupt culeak dump: section %u "
                                "(%llu bytes at %llu) lies outside the file",
                                name, id, (unsigned long long)slen, (unsigned long long)off);
        out->has[id] = true;
        out->sec[id] = p + off;
        out->len[id] = (size_t)slen;
    }
    for (int id = 1; id < CL_DUMP_REQUIRED_IDS; id++)
        if (!out->has[id])
            return cl_error_set(err, CL_E_NOT_CORE,
                                "%s is a corrupt culeak dump: section %d "
                                "is missing",
                                name, id);
    return 0;
}

int cl_dumpfile_parse(const unsigned char *p, size_t len, const char *name, struct cl_dumpfile *out,
                      struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!cl_dumpfile_is_dump(p, len))
        return cl_error_set(err, CL_E_NOT_CORE, "%s is not a culeak dump (no CLDUMP magic)", name);
    if (len < CL_DUMP_HEADER_SIZE)
        return cl_error_set(err, CL_E_TRUNCATED,
                            "%s is truncated: %zu bytes, shorter than a "
                            "dump's header",
                            name, len);
    struct cl_bytes_in in = {p + CL_DUMP_MAGIC_LEN, CL_DUMP_HEADER_SIZE - CL_DUMP_MAGIC_LEN, 0,
                             false, false};
    uint32_t version = cl_in_u32(&in), n = cl_in_u32(&in);
    uint64_t table = cl_in_u64(&in), size = cl_in_u64(&in);
    if (version != CL_DUMP_VERSION)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "%s is a culeak dump of format version %u; "
                            "this culeak reads version %u",
                            name, version, CL_DUMP_VERSION);
    if (size != len)
        return cl_error_set(err, size > len ? CL_E_TRUNCATED : CL_E_NOT_CORE,
                            "%s is %s: %zu of "
                            "%llu bytes present%s",
                            name, size > len ? "truncated" : "corrupt", len,
                            (unsigned long long)size,
                            size > len ? " (the copy was cut "
                                         "short)"
                                       : " (bytes after its end)");
    out->version = version;
    return parse_table(p, len, name, table, n, out, err);
}

/* ---- writing ---- */

static void put(struct cl_dumpfile_writer *w, const void *data, size_t len)
{
    if (!w->failed && len && fwrite(data, 1, len, w->f) != len)
        w->failed = true;
    w->at += len;
}

void cl_dumpfile_begin(struct cl_dumpfile_writer *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    unsigned char zero[CL_DUMP_HEADER_SIZE] = {0};
    put(w, zero, sizeof zero); /* the header, written for real once the table's place is known */
}

void cl_dumpfile_begin_section(struct cl_dumpfile_writer *w, enum cl_dump_section_id id,
                               size_t align)
{
    static const unsigned char zero[64] = {0};
    while (align > 1 && w->at % align) {
        size_t pad = align - (size_t)(w->at % align);
        put(w, zero, pad < sizeof zero ? pad : sizeof zero);
    }
    if (w->n == CL_DUMP_SECTION_IDS) {
        w->failed = true;
        return;
    }
    w->ids[w->n] = (uint32_t)id;
    w->off[w->n] = w->at;
    w->len[w->n++] = 0;
}

void cl_dumpfile_write(struct cl_dumpfile_writer *w, const void *data, size_t len)
{
    put(w, data, len);
    if (w->n)
        w->len[w->n - 1] += len;
}

int cl_dumpfile_finish(struct cl_dumpfile_writer *w)
{
    struct cl_bytes_out o = {0};
    for (size_t i = 0; i < w->n; i++) {
        cl_out_u32(&o, w->ids[i]);
        cl_out_u32(&o, 0);
        cl_out_u64(&o, w->off[i]);
        cl_out_u64(&o, w->len[i]);
    }
    uint64_t table = w->at;
    put(w, o.p, o.len);
    struct cl_bytes_out h = {0};
    cl_out_bytes(&h, CL_DUMP_MAGIC, CL_DUMP_MAGIC_LEN);
    cl_out_u32(&h, CL_DUMP_VERSION);
    cl_out_u32(&h, (uint32_t)w->n);
    cl_out_u64(&h, table);
    cl_out_u64(&h, w->at);
    bool ok = !o.oom && !h.oom && !w->failed && fseek(w->f, 0, SEEK_SET) == 0 &&
              fwrite(h.p, 1, h.len, w->f) == h.len && fflush(w->f) == 0;
    cl_out_free(&o);
    cl_out_free(&h);
    return ok ? 0 : CL_E_IO;
}
