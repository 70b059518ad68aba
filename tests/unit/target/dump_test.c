/* The dump file: written from a recording target over a fake page source, read back as a target
 * (its pages, failures, maps, threads, files), then cut short and corrupted field by field: each
 * must give its one error, never a read out of bounds (the sanitizer build runs these too). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "image.h"
#include "suites.h"
#include "target/dump.h"
#include "target/dumpfile.h"
#include "testutil.h"
#include "util/bytes.h"

#define BASE 0x7f0000000000ull
#define NPAGES 8u
#define BAD_PAGE 5u     /* fails with CL_E_UNREADABLE */
#define ZERO_PAGE 3u    /* all zeros: stored as a zero run */

static unsigned char fake_mem[NPAGES * CL_PAGE_SIZE];

static struct tu_image image = {.base = BASE,
                                .bytes = fake_mem,
                                .size = sizeof fake_mem,
                                .bad_page = BASE + BAD_PAGE * CL_PAGE_SIZE};

/* A dump of the fake target after reading pages 0-5 (not 6 and 7), in memory; allocator_only
 * as `culeak dump --allocator-only` sets it. */
static unsigned char *make_dump(size_t *len, bool allocator_only)
{
    for (size_t i = 0; i < sizeof fake_mem; i++)
        fake_mem[i] = (unsigned char)(i * 7 + i / CL_PAGE_SIZE);
    memset(fake_mem + ZERO_PAGE * CL_PAGE_SIZE, 0, CL_PAGE_SIZE);
    struct cl_open_options o = {.record = true};
    struct cl_mapping m = {
        .start = BASE, .end = BASE + NPAGES * CL_PAGE_SIZE, .perms = CL_MAP_R, .path = "/lib/x.so"};
    struct cl_target *t = tu_image_target(&image, CL_TARGET_CORE, &o, &m, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    t->pid = 42;
    t->signal = 6;
    t->exe_path = strdup("/usr/bin/python3");
    t->threads = calloc(2, sizeof *t->threads);
    t->threads[0].tid = 42;
    t->threads[1].tid = 43;
    t->nthreads = 2;
    t->allocator_only = allocator_only;
    unsigned char buf[CL_PAGE_SIZE];
    for (unsigned p = 0; p <= BAD_PAGE; p++)
        (void)cl_read(t, BASE + p * CL_PAGE_SIZE + 8, buf, 16);   /* BAD_PAGE fails: kept so */
    CU_ASSERT_EQUAL(t->record->n, BAD_PAGE + 1);
    CU_ASSERT_EQUAL(cl_filerec_add(&t->files, "/t/version.py", "/here/version.py", "v = '1'"), 0);
    FILE *f = tmpfile();
    CU_ASSERT_FATAL(f != NULL);
    uint64_t size = 0;
    struct cl_error err;
    CU_ASSERT_EQUAL(cl_dump_write(t, "opened with a warning", "SYMS", 4, f, &size, &err), 0);
    cl_target_close(t);
    unsigned char *p = malloc(size);
    rewind(f);
    CU_ASSERT_FATAL(p && fread(p, 1, size, f) == size);
    fclose(f);
    *len = (size_t)size;
    return p;
}

static int open_bytes(const unsigned char *p, size_t len, struct cl_target **t,
                      struct cl_error *err)
{
    return cl_target_open_dump_bytes(p, len, "d", NULL, t, err);
}

static void test_round_trip(void)
{
    size_t len;
    unsigned char *p = make_dump(&len, false);
    struct cl_target *t;
    struct cl_error err;
    CU_ASSERT_FATAL(open_bytes(p, len, &t, &err) == 0);
    CU_ASSERT_EQUAL(t->kind, CL_TARGET_DUMP);
    CU_ASSERT_EQUAL(t->source_kind, CL_TARGET_CORE);
    CU_ASSERT_EQUAL(t->pid, 42);
    CU_ASSERT_EQUAL(t->signal, 6);
    CU_ASSERT_STRING_EQUAL(t->exe_path, "/usr/bin/python3");
    CU_ASSERT_STRING_EQUAL(t->warnings, "opened with a warning");
    CU_ASSERT_EQUAL(t->nthreads, 2);
    CU_ASSERT_EQUAL(t->threads[1].tid, 43);
    CU_ASSERT(!t->allocator_only);
    CU_ASSERT_EQUAL(t->maps.n, 1);
    CU_ASSERT_STRING_EQUAL(t->maps.v[0].path, "/lib/x.so");
    const unsigned char *sym;
    size_t symlen;
    CU_ASSERT(cl_dump_symbols(t, &sym, &symlen) && symlen == 4 && memcmp(sym, "SYMS", 4) == 0);
    unsigned char page[CL_PAGE_SIZE];
    for (unsigned pn = 0; pn < BAD_PAGE; pn++) {
        CU_ASSERT_EQUAL(cl_read(t, BASE + pn * CL_PAGE_SIZE, page, sizeof page), 0);
        CU_ASSERT(memcmp(page, fake_mem + pn * CL_PAGE_SIZE, sizeof page) == 0);
    }
    /* across the end of the data run into the zero run: more than the window holds */
    unsigned char across[16];
    CU_ASSERT_EQUAL(cl_read(t, BASE + 3 * CL_PAGE_SIZE - 8, across, sizeof across), 0);
    CU_ASSERT(memcmp(across, fake_mem + 3 * CL_PAGE_SIZE - 8, sizeof across) == 0);
    /* the failed read fails the same way; the target goes on */
    CU_ASSERT_EQUAL(cl_read(t, BASE + BAD_PAGE * CL_PAGE_SIZE, page, 8), CL_E_UNREADABLE);
    CU_ASSERT(!t->gone);
    char local[64], text[64];
    CU_ASSERT_EQUAL(cl_target_text_file(t, "/t/version.py", local, sizeof local, text, sizeof text),
                    0);
    CU_ASSERT_STRING_EQUAL(local, "/here/version.py");
    CU_ASSERT_STRING_EQUAL(text, "v = '1'");
    /* a page never read when dumping is not guessed: the target is lost, and says why */
    CU_ASSERT_EQUAL(cl_read(t, BASE + 6 * CL_PAGE_SIZE, page, 8), CL_E_UNREADABLE);
    CU_ASSERT(t->gone);
    CU_ASSERT_EQUAL(cl_target_went_away(t, &err), CL_E_UNREADABLE);
    CU_ASSERT(strstr(err.msg, "holds no page at 0x7f0000006000") != NULL);
    CU_ASSERT_NOT_EQUAL(cl_read(t, BASE, page, 8), 0);   /* sticky */
    cl_target_close(t);
    free(p);
}

/* The runs are compact: pages 0-2 one data run, 3 a zero run, 4 data, 5 failed. */
static void test_runs_are_compact(void)
{
    size_t len;
    unsigned char *p = make_dump(&len, false);
    struct cl_dumpfile df;
    struct cl_error err;
    CU_ASSERT_FATAL(cl_dumpfile_parse(p, len, "d", &df, &err) == 0);
    struct cl_bytes_in in = {df.sec[CL_DUMP_PAGE_RUNS], df.len[CL_DUMP_PAGE_RUNS], 0, false, false};
    CU_ASSERT_EQUAL(cl_in_u64(&in), 4);
    CU_ASSERT_EQUAL(df.len[CL_DUMP_PAGE_DATA], 4 * CL_PAGE_SIZE); /* zero and failed: no bytes */
    free(p);
}

/* Every prefix of a dump is refused cleanly, as truncated or (a cut inside the magic) foreign. */
static void test_every_truncation(void)
{
    size_t len;
    unsigned char *p = make_dump(&len, false);
    for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : 509) {
        unsigned char *q = malloc(cut ? cut : 1);
        memcpy(q, p, cut);
        struct cl_target *t = NULL;
        struct cl_error err;
        int rc = open_bytes(q, cut, &t, &err);
        CU_ASSERT(rc == (cut < CL_DUMP_MAGIC_LEN ? CL_E_NOT_CORE : CL_E_TRUNCATED));
        CU_ASSERT(t == NULL);
        free(q);
    }
    free(p);
}

/* Offset of section id's table entry in p. */
static size_t table_entry(const unsigned char *p, uint32_t id)
{
    uint64_t table;
    uint32_t n;
    memcpy(&n, p + 12, sizeof n);
    memcpy(&table, p + 16, sizeof table);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t have;
        memcpy(&have, p + table + i * CL_DUMP_TABLE_ENTRY, sizeof have);
        if (have == id)
            return (size_t)table + i * CL_DUMP_TABLE_ENTRY;
    }
    CU_FAIL("no such section");
    return 0;
}

static uint64_t section_offset(const unsigned char *p, uint32_t id)
{
    uint64_t off;
    memcpy(&off, p + table_entry(p, id) + 8, sizeof off);
    return off;
}

static void expect_refused(unsigned char *p, size_t len, int rc, const char *words)
{
    struct cl_target *t = NULL;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(open_bytes(p, len, &t, &err), rc);
    CU_ASSERT(t == NULL);
    CU_ASSERT(strstr(err.msg, words) != NULL);
    if (!strstr(err.msg, words))
        fprintf(stderr, "\n  got: %s\n", err.msg);
}

static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}

static void test_crafted(void)
{
    size_t len;
    unsigned char *orig = make_dump(&len, false), *p = malloc(len);
    /* foreign */
    memcpy(p, orig, len);
    p[0] = 'X';
    expect_refused(p, len, CL_E_NOT_CORE, "not a culeak dump");
    /* a newer format */
    memcpy(p, orig, len);
    p[8] = 2;
    expect_refused(p, len, CL_E_UNSUPPORTED, "format version 2");
    /* bytes after its end */
    unsigned char *longer = calloc(1, len + 16);
    memcpy(longer, orig, len);
    expect_refused(longer, len + 16, CL_E_NOT_CORE, "corrupt");
    free(longer);
    /* a section table past the end, and a section count that overflows it */
    memcpy(p, orig, len);
    put64(p + 16, UINT64_MAX - 8);
    expect_refused(p, len, CL_E_NOT_CORE, "section table");
    memcpy(p, orig, len);
    p[12] = 0xff, p[13] = 0xff, p[14] = 0xff, p[15] = 0xff;
    expect_refused(p, len, CL_E_NOT_CORE, "section table");
    /* a section whose length wraps past the end */
    memcpy(p, orig, len);
    put64(p + table_entry(p, CL_DUMP_MAPS) + 16, UINT64_MAX);
    expect_refused(p, len, CL_E_NOT_CORE, "lies outside the file");
    /* a repeated section */
    memcpy(p, orig, len);
    p[table_entry(p, CL_DUMP_FILES)] = CL_DUMP_MAPS;
    expect_refused(p, len, CL_E_NOT_CORE, "repeated");
    /* a run count bigger than its section */
    memcpy(p, orig, len);
    put64(p + section_offset(p, CL_DUMP_PAGE_RUNS), 1u << 30);
    expect_refused(p, len, CL_E_NOT_CORE, "page-run count");
    /* a data run pointing past the page data, and a misaligned one */
    memcpy(p, orig, len);
    put64(p + section_offset(p, CL_DUMP_PAGE_RUNS) + 8 + 24, UINT64_MAX - 4095);
    expect_refused(p, len, CL_E_NOT_CORE, "page run");
    memcpy(p, orig, len);
    put64(p + section_offset(p, CL_DUMP_PAGE_RUNS) + 8, BASE + 1);
    expect_refused(p, len, CL_E_NOT_CORE, "page run");
    /* a mapping that ends before it starts */
    memcpy(p, orig, len);
    put64(p + section_offset(p, CL_DUMP_MAPS) + 8 + 8, BASE - 1);
    expect_refused(p, len, CL_E_NOT_CORE, "mapping");
    /* a mapping count bigger than its section */
    memcpy(p, orig, len);
    put64(p + section_offset(p, CL_DUMP_MAPS), UINT64_MAX);
    expect_refused(p, len, CL_E_NOT_CORE, "mapping count");
    /* a string length past the end of its section (the executable's path in META) */
    memcpy(p, orig, len);
    p[section_offset(p, CL_DUMP_META) + 16 + 3] = 0x7f;
    expect_refused(p, len, CL_E_NOT_CORE, "target description");
    free(p);
    free(orig);
}

/* An allocator-only dump says so in its SCOPE section, which a whole dump does not have, and a
 * redacted one too; a flag this culeak does not know, or bytes after the flags, are a corrupt
 * dump. */
static void test_scope(void)
{
    size_t len, whole_len;
    unsigned char *p = make_dump(&len, true), *whole = make_dump(&whole_len, false);
    CU_ASSERT(len > whole_len);
    struct cl_target *t;
    struct cl_error err;
    CU_ASSERT_FATAL(open_bytes(p, len, &t, &err) == 0);
    CU_ASSERT(t->allocator_only);
    cl_target_close(t);
    uint64_t scope = section_offset(p, CL_DUMP_SCOPE);
    p[scope] = CL_DUMP_SCOPE_REDACTED; /* dump --redact's */
    CU_ASSERT_FATAL(open_bytes(p, len, &t, &err) == 0);
    CU_ASSERT(t->redacted && !t->allocator_only);
    cl_target_close(t);
    p[scope] = 4;
    expect_refused(p, len, CL_E_NOT_CORE, "scope section");
    p[scope] = 1;
    put64(p + table_entry(p, CL_DUMP_SCOPE) + 16, 5);
    expect_refused(p, len, CL_E_NOT_CORE, "scope section");
    free(p);
    free(whole);
}

void register_target_dump_tests(void)
{
    static const struct tu_test tests[] = {
        {"written and read back", test_round_trip},
        {"pages stored as runs", test_runs_are_compact},
        {"every truncation refused", test_every_truncation},
        {"crafted fields refused", test_crafted},
        {"an allocator-only dump's scope", test_scope},
        {NULL, NULL},
    };
    tu_add_suite("target/dump", tests);
}
