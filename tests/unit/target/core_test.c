/* ELF core targets, on crafted fixture cores written to temporary files: what a core holds is
 * read from it, what it leaves out is read from the files its NT_FILE note names (found through
 * the locator, checked by build-id, never zeros when missing), and malformed files are refused
 * with the right code. */
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/target.h"
#include "testutil.h"

/* ---- The crafted fixture: an ELF64 ET_CORE with one PT_NOTE and the PT_LOADs asked for. ---- */

struct fx_seg {
    uint64_t vaddr, memsz, filesz;   /* filesz 0: left out of the dump, as the kernel does */
    const unsigned char *data;       /* filesz bytes */
};

struct fx_file {
    uint64_t start, end, offset;     /* offset in bytes; written in units of the page size */
    const char *path;
};

struct fx_core {
    unsigned char elfclass, data;    /* 0: ELFCLASS64, ELFDATA2LSB */
    uint16_t type, machine;          /* 0: ET_CORE, EM_X86_64 */
    uint16_t phnum_override;         /* used when has_phnum_override */
    bool has_phnum_override;
    uint64_t page_size;              /* NT_FILE's; 0: 4096 */
    int tids[4];
    size_t ntids;
    int cursig;                      /* the first thread's pr_cursig */
    int psinfo_pid;                  /* 0: no NT_PRPSINFO */
    uint64_t at_entry;               /* 0: no NT_AUXV */
    struct fx_seg segs[4];
    size_t nsegs;
    struct fx_file files[4];
    size_t nfiles;
    bool bad_nt_file;                /* NT_FILE with page size 0 */
    uint64_t phoff;                  /* e_phoff; 0: right after the ELF header */
    uint32_t prstatus_size;          /* each NT_PRSTATUS's size; 0: 336, x86-64's */
    uint64_t filesz_over;            /* added to the first PT_LOAD's p_filesz (not its data) */
};

struct buf {
    unsigned char *p;
    size_t len, cap;
};

static void buf_put(struct buf *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b->p);
    }
    if (data)
        memcpy(b->p + b->len, data, n);
    else
        memset(b->p + b->len, 0, n);
    b->len += n;
}

static void buf_align(struct buf *b, size_t a)
{
    buf_put(b, NULL, (a - b->len % a) % a);
}
static void buf_u64(struct buf *b, uint64_t v)
{
    buf_put(b, &v, 8);
}

static void fx_note(struct buf *b, uint32_t type, const void *desc, size_t descsz)
{
    Elf64_Nhdr h = {5, (uint32_t)descsz, type};
    buf_put(b, &h, sizeof h);
    buf_put(b, "CORE\0\0\0", 8);
    buf_put(b, desc, descsz);
    buf_align(b, 4);
}

/* The core's bytes; *len set. */
static unsigned char *build_fixture_core(const struct fx_core *fx, size_t *len)
{
    struct buf b = {0};
    uint16_t phnum = (uint16_t)(1 + fx->nsegs);
    Elf64_Ehdr eh = {0};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = fx->elfclass ? fx->elfclass : ELFCLASS64;
    eh.e_ident[EI_DATA] = fx->data ? fx->data : ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = fx->type ? fx->type : ET_CORE;
    eh.e_machine = fx->machine ? fx->machine : EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = fx->phoff ? fx->phoff : sizeof eh;
    eh.e_ehsize = sizeof eh;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = fx->has_phnum_override ? fx->phnum_override : phnum;
    buf_put(&b, &eh, sizeof eh);
    buf_put(&b, NULL, phnum * sizeof(Elf64_Phdr));   /* filled in below */

    size_t notes_at = b.len;
    for (size_t i = 0; i < fx->ntids; i++) {
        unsigned char prs[336] = {0};
        int32_t tid = fx->tids[i];
        int16_t sig = i == 0 ? (int16_t)fx->cursig : 0;
        memcpy(prs + 12, &sig, 2);
        memcpy(prs + 32, &tid, 4);
        fx_note(&b, NT_PRSTATUS, prs, fx->prstatus_size ? fx->prstatus_size : sizeof prs);
    }
    if (fx->psinfo_pid) {
        unsigned char psi[136] = {0};
        int32_t pid = fx->psinfo_pid;
        memcpy(psi + 24, &pid, 4);
        memcpy(psi + 40, "python3", 7);
        fx_note(&b, NT_PRPSINFO, psi, sizeof psi);
    }
    if (fx->at_entry) {
        const uint64_t auxv[] = {AT_PAGESZ, 4096, AT_ENTRY, fx->at_entry, AT_NULL, 0};
        fx_note(&b, NT_AUXV, auxv, sizeof auxv);
    }
    if (fx->nfiles) {
        uint64_t ps = fx->page_size ? fx->page_size : 4096;
        struct buf d = {0};
        buf_u64(&d, fx->nfiles);
        buf_u64(&d, fx->bad_nt_file ? 0 : ps);
        for (size_t i = 0; i < fx->nfiles; i++) {
            buf_u64(&d, fx->files[i].start);
            buf_u64(&d, fx->files[i].end);
            buf_u64(&d, fx->files[i].offset / ps);
        }
        for (size_t i = 0; i < fx->nfiles; i++)
            buf_put(&d, fx->files[i].path, strlen(fx->files[i].path) + 1);
        fx_note(&b, NT_FILE, d.p, d.len);
        free(d.p);
    }
    Elf64_Phdr note = {
        .p_type = PT_NOTE, .p_offset = notes_at, .p_filesz = b.len - notes_at, .p_align = 4};
    memcpy(b.p + sizeof eh, &note, sizeof note);

    for (size_t i = 0; i < fx->nsegs; i++) {
        const struct fx_seg *s = &fx->segs[i];
        buf_align(&b, 4096);
        Elf64_Phdr ph = {.p_type = PT_LOAD,
                         .p_flags = PF_R | PF_W,
                         .p_offset = b.len,
                         .p_vaddr = s->vaddr,
                         .p_filesz = s->filesz,
                         .p_memsz = s->memsz,
                         .p_align = 4096};
        if (i == 0)
            ph.p_filesz += fx->filesz_over;
        memcpy(b.p + sizeof eh + (1 + i) * sizeof ph, &ph, sizeof ph);
        buf_put(&b, s->data, s->filesz);
    }
    *len = b.len;
    return b.p;
}

/* Writes the crafted fixture core to dir/name, cut to keep bytes when keep is not 0; the path
 * is malloc'ed. */
static char *write_fixture_core(const char *dir, const char *name, const struct fx_core *fx,
                                size_t keep)
{
    size_t len;
    unsigned char *core = build_fixture_core(fx, &len);
    char *path = tu_path(dir, name);
    CU_ASSERT_EQUAL(tu_write_file(path, core, keep && keep < len ? keep : len), 0);
    free(core);
    return path;
}

/* ---- The standard fixture: a dumped segment, and a file-backed range left out of it. ---- */

#define DUMPED_AT 0x10000u
#define FILE_AT 0x20000u
#define FILE_OFF 0x1000u     /* the range maps data.bin from its second page */

static unsigned char dumped[0x2000];
static unsigned char filedata[0x3000];

struct fixture {
    char *dir, *data_path;
};

static void fixture_setup(struct fixture *f, size_t file_len)
{
    for (size_t i = 0; i < sizeof dumped; i++)
        dumped[i] = (unsigned char)(i * 11u + 3u);
    for (size_t i = 0; i < sizeof filedata; i++)
        filedata[i] = (unsigned char)(i * 13u + 5u + i / 4096u);
    f->dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->dir);
    f->data_path = tu_path(f->dir, "data.bin");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(f->data_path, filedata, file_len), 0);
}

static void fixture_teardown(struct fixture *f)
{
    free(f->data_path);
    tu_rmtree(f->dir);
}

static struct fx_core std_core(const char *file_path, uint64_t page_size, bool file_segment)
{
    struct fx_core fx = {
        .page_size = page_size,
        .tids = {1234, 1240},
        .ntids = 2,
        .cursig = 11,
        .psinfo_pid = 1234,
        .segs = {{DUMPED_AT, sizeof dumped, sizeof dumped, dumped}, {FILE_AT, 0x2000, 0, NULL}},
        .nsegs = file_segment ? 2 : 1,   /* gcore leaves excluded file ranges out entirely */
        .files = {{FILE_AT, FILE_AT + 0x2000, FILE_OFF, file_path}},
        .nfiles = 1,
    };
    return fx;
}

static struct cl_target *open_ok(const char *path, const struct cl_open_options *opt)
{
    struct cl_target *t = NULL;
    struct cl_error err = {0};
    int rc = cl_target_open_core(path, opt, &t, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc)
        fprintf(stderr, "\n  open %s: %s\n", path, err.msg);
    return t;
}

static void check_file_range(struct cl_target *t)
{
    unsigned char buf[64];
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT + 0x10, buf, sizeof buf), 0);
    CU_ASSERT_EQUAL(memcmp(buf, filedata + FILE_OFF + 0x10, sizeof buf), 0);
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT + 0xff0, buf, 32), 0);   /* across a page */
    CU_ASSERT_EQUAL(memcmp(buf, filedata + FILE_OFF + 0xff0, 32), 0);
}

static void test_valid_core(void)
{
    const uint64_t page_sizes[] = {4096, 1};
    for (int k = 0; k < 2; k++) {
        struct fixture f;
        fixture_setup(&f, sizeof filedata);
        struct fx_core fx = std_core(f.data_path, page_sizes[k], true);
        char *core = write_fixture_core(f.dir, "core", &fx, 0);
        struct cl_target *t = open_ok(core, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(t->kind, CL_TARGET_CORE);
        CU_ASSERT_EQUAL(t->pid, 1234);
        CU_ASSERT_EQUAL(t->signal, 11);   /* the first thread's: the one that crashed */
        CU_ASSERT_EQUAL_FATAL(t->nthreads, 2);
        CU_ASSERT_EQUAL(t->threads[0].tid, 1234);
        CU_ASSERT_EQUAL(t->threads[1].tid, 1240);

        CU_ASSERT_EQUAL_FATAL(t->maps.n, 2);
        CU_ASSERT_EQUAL(t->maps.v[0].start, DUMPED_AT);
        CU_ASSERT_EQUAL(t->maps.v[0].end, DUMPED_AT + sizeof dumped);
        CU_ASSERT_PTR_NULL(t->maps.v[0].path);
        CU_ASSERT_EQUAL(t->maps.v[1].start, FILE_AT);
        CU_ASSERT_EQUAL(t->maps.v[1].offset, FILE_OFF);
        CU_ASSERT_STRING_EQUAL(t->maps.v[1].path, f.data_path);

        unsigned char buf[256];
        CU_ASSERT_EQUAL(cl_read(t, DUMPED_AT + 5, buf, sizeof buf), 0);
        CU_ASSERT_EQUAL(memcmp(buf, dumped + 5, sizeof buf), 0);
        CU_ASSERT_EQUAL(cl_read(t, DUMPED_AT + 0xf80, buf, sizeof buf), 0);
        CU_ASSERT_EQUAL(memcmp(buf, dumped + 0xf80, sizeof buf), 0);
        check_file_range(t);
        CU_ASSERT_EQUAL(cl_read(t, 0x30000, buf, 8), CL_E_UNREADABLE);
        CU_ASSERT_EQUAL(cl_read(t, DUMPED_AT + sizeof dumped - 4, buf, 8), CL_E_UNREADABLE);
        cl_target_close(t);
        free(core);
        fixture_teardown(&f);
    }
}

static void test_gcore_style_and_pid_fallback(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    struct fx_core fx = std_core(f.data_path, 1, false);
    fx.psinfo_pid = 0;   /* no NT_PRPSINFO: the pid is the first thread's */
    fx.tids[0] = 4321;
    fx.cursig = 0;       /* gcore: no signal */
    char *core = write_fixture_core(f.dir, "core", &fx, 0);
    struct cl_target *t = open_ok(core, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->pid, 4321);
    CU_ASSERT_EQUAL(t->signal, 0);
    CU_ASSERT_EQUAL_FATAL(t->maps.n, 2);   /* the NT_FILE-only range is mapped, read-only */
    CU_ASSERT_EQUAL(t->maps.v[1].start, FILE_AT);
    CU_ASSERT_EQUAL(t->maps.v[1].end, FILE_AT + 0x2000);
    CU_ASSERT_EQUAL(t->maps.v[1].perms, CL_MAP_R);
    check_file_range(t);
    cl_target_close(t);
    free(core);
    fixture_teardown(&f);
}

static void test_missing_backing_file(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    struct fx_core fx = std_core(f.data_path, 4096, true);
    char *core = write_fixture_core(f.dir, "core", &fx, 0);
    CU_ASSERT_EQUAL_FATAL(unlink(f.data_path), 0);
    struct cl_target *t = open_ok(core, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    unsigned char buf[16];
    memset(buf, 0xa5, sizeof buf);
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT + 0x10, buf, sizeof buf), CL_E_UNREADABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "not on this machine"));
    for (size_t i = 0; i < sizeof buf; i++)
        CU_ASSERT_EQUAL(buf[i], 0xa5);   /* never zeros */
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT + 0x1010, buf, sizeof buf), CL_E_UNREADABLE);
    CU_ASSERT_EQUAL(cl_read(t, DUMPED_AT, buf, sizeof buf), 0);   /* the dump itself is fine */
    cl_target_close(t);
    free(core);
    fixture_teardown(&f);
}

static void test_locator_finds_file(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    /* the core names a path that does not exist here; data.bin sits in a lib dir */
    struct fx_core fx = std_core("/nonexistent-culeak-test/lib/data.bin", 4096, true);
    char *core = write_fixture_core(f.dir, "core", &fx, 0);
    unsigned char buf[16];

    struct cl_target *t = open_ok(core, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT, buf, sizeof buf), CL_E_UNREADABLE);
    cl_target_close(t);

    const char *dirs[] = {"/nonexistent-culeak-test/empty", f.dir};
    struct cl_open_options opt = {.locator = {.lib_dirs = dirs, .nlib_dirs = 2}};
    t = open_ok(core, &opt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    check_file_range(t);
    cl_target_close(t);

    /* the same through a sysroot holding the recorded path */
    char *sysroot = tu_path(f.dir, "sysroot");
    char *in_root = tu_path(sysroot, "nonexistent-culeak-test/lib/data.bin");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(in_root, filedata, sizeof filedata), 0);
    struct cl_open_options opt2 = {.locator = {.sysroot = sysroot}};
    t = open_ok(core, &opt2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    check_file_range(t);
    cl_target_close(t);
    free(in_root);
    free(sysroot);
    free(core);
    fixture_teardown(&f);
}

static void test_file_shorter_than_mapping(void)
{
    struct fixture f;
    fixture_setup(&f, FILE_OFF + 100);   /* the range's first page holds 100 bytes of file */
    struct fx_core fx = std_core(f.data_path, 4096, true);
    char *core = write_fixture_core(f.dir, "core", &fx, 0);
    struct cl_target *t = open_ok(core, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    unsigned char buf[300];
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT, buf, 100), 0);
    CU_ASSERT_EQUAL(memcmp(buf, filedata + FILE_OFF, 100), 0);
    memset(buf, 0xa5, sizeof buf);
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT, buf, sizeof buf), 0);   /* the last page's tail is zero */
    CU_ASSERT_EQUAL(buf[99], filedata[FILE_OFF + 99]);
    CU_ASSERT_EQUAL(buf[100], 0);
    CU_ASSERT_EQUAL(buf[299], 0);
    CU_ASSERT_EQUAL(cl_read(t, FILE_AT + 0x1000, buf, 8), CL_E_UNREADABLE);   /* past EOF */
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "past the end"));
    cl_target_close(t);
    free(core);
    fixture_teardown(&f);
}

/* A one-page ELF image carrying a GNU build-id note of 20 bytes all equal to id. */
static void elf_image(unsigned char *page, unsigned char id, uint16_t type)
{
    memset(page, 0, 4096);
    Elf64_Ehdr eh = {0};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_type = type;
    eh.e_machine = EM_X86_64;
    eh.e_phoff = sizeof eh;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 1;
    Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = 200, .p_filesz = 12 + 4 + 20};
    Elf64_Nhdr nh = {4, 20, NT_GNU_BUILD_ID};
    memcpy(page, &eh, sizeof eh);
    memcpy(page + sizeof eh, &ph, sizeof ph);
    memcpy(page + 200, &nh, sizeof nh);
    memcpy(page + 212, "GNU", 4);
    memset(page + 216, id, 20);
}

#define LIB_AT 0x40000u

/* A core whose lib.so has its first page (build-id 0x11...) dumped and its second left out. */
static char *buildid_core(const struct fixture *f, const char *lib_path, unsigned char *page0)
{
    elf_image(page0, 0x11, ET_DYN);
    struct fx_core fx = {
        .tids = {99},
        .ntids = 1,
        .at_entry = LIB_AT + 0x100,   /* makes lib.so the executable */
        .segs = {{LIB_AT, 0x1000, 0x1000, page0}, {LIB_AT + 0x1000, 0x1000, 0, NULL}},
        .nsegs = 2,
        .files = {{LIB_AT, LIB_AT + 0x1000, 0, lib_path},
                  {LIB_AT + 0x1000, LIB_AT + 0x2000, 0x1000, lib_path}},
        .nfiles = 2,
    };
    return write_fixture_core(f->dir, "core", &fx, 0);
}

static void write_lib(const char *path, unsigned char id)
{
    unsigned char img[0x2000];
    elf_image(img, id, ET_DYN);
    memcpy(img + 0x1000, filedata + 0x1000, 0x1000);
    CU_ASSERT_EQUAL_FATAL(tu_write_file(path, img, sizeof img), 0);
}

static void test_buildid_checked(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    char *lib = tu_path(f.dir, "lib.so");
    unsigned char page0[4096], buf[32];
    char *core = buildid_core(&f, lib, page0);

    write_lib(lib, 0x11);   /* the same build */
    struct cl_target *t = open_ok(core, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(t->exe_path);
    if (t->exe_path)
        CU_ASSERT_STRING_EQUAL(t->exe_path, lib);
    CU_ASSERT_EQUAL(cl_read(t, LIB_AT + 0x1000, buf, sizeof buf), 0);
    CU_ASSERT_EQUAL(memcmp(buf, filedata + 0x1000, sizeof buf), 0);
    cl_target_close(t);

    write_lib(lib, 0x22);   /* replaced on disk by another build */
    t = open_ok(core, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(cl_read(t, LIB_AT + 0x1000, buf, sizeof buf), CL_E_UNREADABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->err.msg, "does not match"));
    CU_ASSERT_PTR_NOT_NULL(t->warnings);
    if (t->warnings)
        CU_ASSERT_PTR_NOT_NULL(strstr(t->warnings, "build-id differs"));
    CU_ASSERT_EQUAL(cl_read(t, LIB_AT, buf, sizeof buf), 0);   /* the dumped page still reads */
    cl_target_close(t);
    free(lib);
    free(core);
    fixture_teardown(&f);
}

/* Opening path must fail with want, leave *out NULL and say so in err. */
static void expect_open_fails(const char *path, const struct cl_open_options *opt, int want,
                              const char *msg_part)
{
    struct cl_target *t = (struct cl_target *)&t;   /* not NULL: the call must clear it */
    struct cl_error err = {0};
    int rc = cl_target_open_core(path, opt, &t, &err);
    CU_ASSERT_EQUAL(rc, want);
    CU_ASSERT_EQUAL(err.code, want);
    CU_ASSERT_PTR_NULL(t);
    if (msg_part && !strstr(err.msg, msg_part)) {
        CU_FAIL("error message lacks the expected words");
        fprintf(stderr, "\n  %s: got \"%s\", wanted \"%s\"\n", path, err.msg, msg_part);
    }
    if (rc == 0)
        cl_target_close(t);
}

static void test_open_errors_files(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 2654435761u >> 13);
    char *p = tu_path(f.dir, "junk");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(p, junk, sizeof junk), 0);
    expect_open_fails(p, NULL, CL_E_NOT_CORE, "not an ELF file");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(p, "\177EL", 3), 0);
    expect_open_fails(p, NULL, CL_E_NOT_CORE, "not an ELF file");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(p, "", 0), 0);
    expect_open_fails(p, NULL, CL_E_NOT_CORE, "empty");
    memset(junk, 0, sizeof junk);   /* what gdb leaves when it cannot finish a core */
    CU_ASSERT_EQUAL_FATAL(tu_write_file(p, junk, sizeof junk), 0);
    expect_open_fails(p, NULL, CL_E_TRUNCATED, "unfinished core");
    free(p);

    expect_open_fails("/proc/self/exe", NULL, CL_E_NOT_CORE, "not a core file");
    expect_open_fails(f.dir, NULL, CL_E_NOT_CORE, "not a regular file");
    p = tu_path(f.dir, "no-such-core");
    expect_open_fails(p, NULL, CL_E_IO, "cannot open core");
    free(p);
    fixture_teardown(&f);
}

static void test_open_errors_headers(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    struct fx_core good = std_core(f.data_path, 4096, true);
    size_t full;
    free(build_fixture_core(&good, &full));
    struct {
        const char *what;
        size_t keep;
        int want;
        const char *msg;
    } cases[] = {
        {"32-bit", 0, CL_E_NOT_CORE, "another architecture"},
        {"aarch64", 0, CL_E_NOT_CORE, "another architecture"},
        {"big-endian", 0, CL_E_NOT_CORE, "another architecture"},
        {"ET_EXEC", 0, CL_E_NOT_CORE, "not a core file"},
        {"no phdrs", 0, CL_E_NOT_CORE, "program header"},
        {"no threads", 0, CL_E_NOT_CORE, "NT_PRSTATUS"},
        {"bad NT_FILE", 0, CL_E_NOT_CORE, "malformed note"},
        {"cut in the data", full - 100, CL_E_TRUNCATED, "truncated"},
        {"cut in the phdrs", 100, CL_E_TRUNCATED, "truncated"},
        {"cut in the ELF header", 40, CL_E_TRUNCATED, "truncated"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct fx_core fx = good;
        switch (i) {
        case 0: fx.elfclass = ELFCLASS32; break;
        case 1: fx.machine = EM_AARCH64; break;
        case 2: fx.data = ELFDATA2MSB; break;
        case 3: fx.type = ET_EXEC; break;
        case 4:
            fx.has_phnum_override = true;
            fx.phnum_override = 0;
            break;
        case 5: fx.ntids = 0; break;
        case 6: fx.bad_nt_file = true; break;
        }
        char *core = write_fixture_core(f.dir, "core", &fx, cases[i].keep);
        expect_open_fails(core, NULL, cases[i].want, cases[i].msg);
        free(core);
    }
    fixture_teardown(&f);
}

/* Regression (issue 14, defect 1): e_phoff 0xffff... made the table's end wrap to a small
 * number, the bounds check pass and the copy after it read outside the file (SIGSEGV). */
static void test_phoff_wraps(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    struct fx_core fx = std_core(f.data_path, 4096, true);
    fx.phoff = UINT64_MAX;
    char *core = write_fixture_core(f.dir, "core", &fx, 0);
    expect_open_fails(core, NULL, CL_E_NOT_CORE, "corrupt ELF header");
    free(core);
    fx.phoff = UINT64_MAX - 55;   /* one program header: ends exactly at 2^64 */
    fx.has_phnum_override = true;
    fx.phnum_override = 1;
    core = write_fixture_core(f.dir, "core", &fx, 0);
    expect_open_fails(core, NULL, CL_E_NOT_CORE, "corrupt ELF header");
    free(core);
    fx.phoff = 1u << 20;   /* past the end without wrapping: the table was cut off */
    fx.has_phnum_override = false;
    core = write_fixture_core(f.dir, "core", &fx, 0);
    expect_open_fails(core, NULL, CL_E_TRUNCATED, "program headers end at");
    free(core);
    fixture_teardown(&f);
}

/* Regression (issue 14, defect 2): a PT_LOAD whose p_memsz makes its end wrap past 2^64 to an
 * address inside an NT_FILE entry sent the map builder back to where it started, forever. The
 * alarm turns a hang into a failed run instead of a stuck one. */
static void test_memsz_wraps(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    struct fx_core fx = std_core(f.data_path, 4096, true);
    fx.segs[0] = (struct fx_seg){0x10000, 0 - (uint64_t)0x8000, 0, NULL};   /* ends at 0x8000 */
    fx.nsegs = 1;
    fx.files[0] = (struct fx_file){0x8000, 0x30000, 0, f.data_path};
    char *core = write_fixture_core(f.dir, "core", &fx, 0);
    alarm(20);
    expect_open_fails(core, NULL, CL_E_NOT_CORE, "corrupt program header 1");
    alarm(0);
    free(core);
    fixture_teardown(&f);
}

/* Other headers no kernel or gcore writes: each is refused as not a core, never half-read. The
 * dumped segment is program header 1 (the notes are 0). */
static void test_corrupt_layouts(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    struct fx_core good = std_core(f.data_path, 4096, true);
    const char *msgs[] = {"corrupt program header 1", "corrupt program header 1", "overlap",
                          "overlap", "malformed note"};
    for (size_t i = 0; i < sizeof msgs / sizeof *msgs; i++) {
        struct fx_core fx = good;
        switch (i) {
        case 0: /* p_filesz above p_memsz */ fx.segs[0].memsz = 0x1000; break;
        case 1:   /* p_offset + p_filesz wraps: p_filesz is 2^64 - 256 */
            fx.filesz_over = UINT64_MAX - 0xff - sizeof dumped;
            break;
        case 2: /* PT_LOADs that overlap */ fx.segs[1].vaddr = DUMPED_AT + 0x1000; break;
        case 3:   /* NT_FILE entries that overlap */
            fx.files[1] = (struct fx_file){FILE_AT + 0x1000, FILE_AT + 0x3000, 0, f.data_path};
            fx.nfiles = 2;
            break;
        case 4:   /* a thread note one byte short of struct elf_prstatus */
            fx.prstatus_size = 335;
            break;
        }
        char *core = write_fixture_core(f.dir, "core", &fx, 0);
        expect_open_fails(core, NULL, CL_E_NOT_CORE, msgs[i]);
        free(core);
    }
    fixture_teardown(&f);
}

static void test_exe_option(void)
{
    struct fixture f;
    fixture_setup(&f, sizeof filedata);
    char *lib = tu_path(f.dir, "lib.so");
    unsigned char page0[4096];
    char *core = buildid_core(&f, lib, page0);
    write_lib(lib, 0x11);
    char *other = tu_path(f.dir, "other.so");
    write_lib(other, 0x33);

    struct cl_open_options opt = {.locator = {.exe = lib}};
    struct cl_target *t = open_ok(core, &opt);   /* the right build */
    cl_target_close(t);
    opt.locator.exe = other;
    expect_open_fails(core, &opt, CL_E_EXE_MISMATCH, "build-id differs");
    opt.locator.exe = f.data_path;
    expect_open_fails(core, &opt, CL_E_EXE_MISMATCH, "not an ELF program");
    opt.locator.exe = "/nonexistent-culeak-test/exe";
    expect_open_fails(core, &opt, CL_E_IO, "cannot open --exe");
    free(core);

    /* without an AT_ENTRY the executable is unknown, so --exe cannot be checked */
    struct fx_core fx = std_core(f.data_path, 4096, true);
    core = write_fixture_core(f.dir, "core2", &fx, 0);
    opt.locator.exe = lib;
    expect_open_fails(core, &opt, CL_E_EXE_MISMATCH, "cannot be checked");
    free(core);
    free(other);
    free(lib);
    fixture_teardown(&f);
}

void register_target_core_tests(void)
{
    static const struct tu_test tests[] = {
        {"valid core, NT_FILE page size 4096 and 1", test_valid_core},
        {"gcore-style core, pid from PRSTATUS", test_gcore_style_and_pid_fallback},
        {"missing backing file is unreadable", test_missing_backing_file},
        {"locator lib dirs and sysroot", test_locator_finds_file},
        {"backing file shorter than the mapping", test_file_shorter_than_mapping},
        {"backing file build-id checked", test_buildid_checked},
        {"open errors: files", test_open_errors_files},
        {"open errors: headers and truncation", test_open_errors_headers},
        {"--exe checks", test_exe_option},
        {"e_phoff that wraps (issue 14)", test_phoff_wraps},
        {"p_memsz that wraps (issue 14)", test_memsz_wraps},
        {"corrupt program headers and notes", test_corrupt_layouts},
        {NULL, NULL},
    };
    tu_add_suite("target/core", tests);
}
