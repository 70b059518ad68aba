/* Pure note parsers, fed note buffers built byte by byte. */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/corenotes.h"
#include "testutil.h"
#include "util/error.h"

/* A note buffer under construction. */
struct nbuf {
    unsigned char b[4096];
    size_t len;
};

static void put(struct nbuf *nb, const void *p, size_t n)
{
    CU_ASSERT_FATAL(nb->len + n <= sizeof nb->b);
    memcpy(nb->b + nb->len, p, n);
    nb->len += n;
}

static void pad4(struct nbuf *nb)
{
    static const unsigned char zero[4];
    put(nb, zero, (4 - nb->len % 4) % 4);
}

static void put_u32(struct nbuf *nb, uint32_t v)
{
    put(nb, &v, 4);
}
static void put_u64(struct nbuf *nb, uint64_t v)
{
    put(nb, &v, 8);
}

/* Appends a note whose name is namesz bytes of name (so a name may lack its NUL). */
static void note_raw(struct nbuf *nb, uint32_t type, const char *name, uint32_t namesz,
                     const void *desc, uint32_t descsz)
{
    put_u32(nb, namesz);
    put_u32(nb, descsz);
    put_u32(nb, type);
    put(nb, name, namesz);
    pad4(nb);
    put(nb, desc, descsz);
    pad4(nb);
}

static void note(struct nbuf *nb, uint32_t type, const char *name, const void *desc,
                 uint32_t descsz)
{
    note_raw(nb, type, name, (uint32_t)strlen(name) + 1, desc, descsz);
}

struct seen {
    int n;
    uint32_t type[8];
    char name[8][16];
    const unsigned char *desc[8];
    size_t descsz[8];
    int stop_at;   /* returns 42 on this call (1-based); 0: never */
};

static int record(const struct cl_note *n, void *arg)
{
    struct seen *s = arg;
    if (s->n < 8) {
        s->type[s->n] = n->type;
        snprintf(s->name[s->n], sizeof s->name[0], "%s", n->name);
        s->desc[s->n] = n->desc;
        s->descsz[s->n] = n->descsz;
    }
    s->n++;
    return s->n == s->stop_at ? 42 : 0;
}

static void test_foreach_walks_notes(void)
{
    struct nbuf nb = {0};
    note(&nb, NT_PRSTATUS, "CORE", "abcde", 5);   /* desc padded to 8 */
    size_t second = nb.len;
    note(&nb, NT_GNU_BUILD_ID, "GNU", "\x01\x02\x03\x04", 4);
    struct seen s = {0};
    CU_ASSERT_EQUAL_FATAL(cl_notes_foreach(nb.b, nb.len, record, &s), 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 2);
    CU_ASSERT_EQUAL(s.type[0], NT_PRSTATUS);
    CU_ASSERT_STRING_EQUAL(s.name[0], "CORE");
    CU_ASSERT_PTR_EQUAL(s.desc[0], nb.b + 12 + 8);
    CU_ASSERT_EQUAL(s.descsz[0], 5);
    CU_ASSERT_EQUAL(s.type[1], NT_GNU_BUILD_ID);
    CU_ASSERT_STRING_EQUAL(s.name[1], "GNU");
    CU_ASSERT_PTR_EQUAL(s.desc[1], nb.b + second + 12 + 4);
    CU_ASSERT_EQUAL(memcmp(s.desc[1], "\x01\x02\x03\x04", 4), 0);
}

static void test_foreach_stops_and_edges(void)
{
    struct nbuf nb = {0};
    note(&nb, 1, "CORE", "x", 1);
    note(&nb, 2, "CORE", "y", 1);
    struct seen s = {.stop_at = 1};
    CU_ASSERT_EQUAL(cl_notes_foreach(nb.b, nb.len, record, &s), 42);
    CU_ASSERT_EQUAL(s.n, 1);

    s = (struct seen){0};
    CU_ASSERT_EQUAL(cl_notes_foreach(nb.b, 0, record, &s), 0);
    CU_ASSERT_EQUAL(s.n, 0);

    /* Fewer than a header's bytes left over at the end: ignored. */
    s = (struct seen){0};
    CU_ASSERT_EQUAL(cl_notes_foreach(nb.b, nb.len + 11, record, &s), 0);
    CU_ASSERT_EQUAL(s.n, 2);

    /* An empty note (no name, no desc) is walked with name "". */
    struct nbuf e = {0};
    note_raw(&e, 7, "", 0, "", 0);
    s = (struct seen){0};
    CU_ASSERT_EQUAL(cl_notes_foreach(e.b, e.len, record, &s), 0);
    CU_ASSERT_EQUAL(s.n, 1);
    CU_ASSERT_STRING_EQUAL(s.name[0], "");
    CU_ASSERT_EQUAL(s.descsz[0], 0);
}

static void test_foreach_name_without_nul(void)
{
    struct nbuf nb = {0};
    note_raw(&nb, NT_PRSTATUS, "CORE", 4, "abcd", 4);
    struct seen s = {0};
    CU_ASSERT_EQUAL_FATAL(cl_notes_foreach(nb.b, nb.len, record, &s), 0);
    CU_ASSERT_EQUAL_FATAL(s.n, 1);
    CU_ASSERT_STRING_EQUAL(s.name[0], "");   /* never a name running past its bytes */
    CU_ASSERT_EQUAL(s.descsz[0], 4);
}

static void test_foreach_overrun(void)
{
    struct nbuf nb = {0};
    note(&nb, 1, "CORE", "0123456789", 10);
    struct seen s = {0};
    /* desc cut short */
    CU_ASSERT_EQUAL(cl_notes_foreach(nb.b, nb.len - 4, record, &s), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(s.n, 0);
    /* name cut short */
    CU_ASSERT_EQUAL(cl_notes_foreach(nb.b, 12 + 3, record, &s), CL_E_NOT_CORE);
    /* name padding cut short: desc_at lies past the end */
    struct nbuf p = {0};
    note_raw(&p, 1, "CORE", 5, "", 0);   /* 5 name bytes, padded to 8 */
    CU_ASSERT_EQUAL(cl_notes_foreach(p.b, 12 + 6, record, &s), CL_E_NOT_CORE);
    /* sizes near UINT32_MAX must not wrap */
    struct nbuf h = {0};
    put_u32(&h, 4);
    put_u32(&h, UINT32_MAX);
    put_u32(&h, 1);
    put(&h, "CORE", 4);
    CU_ASSERT_EQUAL(cl_notes_foreach(h.b, h.len, record, &s), CL_E_NOT_CORE);
    struct nbuf h2 = {0};
    put_u32(&h2, UINT32_MAX);
    put_u32(&h2, 0);
    put_u32(&h2, 1);
    CU_ASSERT_EQUAL(cl_notes_foreach(h2.b, h2.len, record, &s), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(s.n, 0);
    /* a good note then a bad one: the first is seen, the walk then fails */
    note(&nb, 2, "CORE", "abcdefgh", 8);
    s = (struct seen){0};
    CU_ASSERT_EQUAL(cl_notes_foreach(nb.b, nb.len - 1, record, &s), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(s.n, 1);
}

/* An NT_FILE desc: count, page_size, count (start, end, pgoff) triples, then the names. */
static void nt_file(struct nbuf *nb, uint64_t count, uint64_t page_size, const uint64_t (*e)[3],
                    const char *const *names, size_t nnames)
{
    put_u64(nb, count);
    put_u64(nb, page_size);
    for (uint64_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++)
            put_u64(nb, e[i][k]);
    for (size_t i = 0; i < nnames; i++)
        put(nb, names[i], strlen(names[i]) + 1);
}

static const char *const two_names[] = {"/usr/bin/python3.11", "/lib/x86_64-linux-gnu/libc.so.6"};

static void check_two_files(const struct cl_mappings *ms)
{
    CU_ASSERT_EQUAL_FATAL(ms->n, 2);
    CU_ASSERT_EQUAL(ms->v[0].start, 0x400000);
    CU_ASSERT_EQUAL(ms->v[0].end, 0x401000);
    CU_ASSERT_EQUAL(ms->v[0].offset, 0);
    CU_ASSERT_STRING_EQUAL(ms->v[0].path, two_names[0]);
    CU_ASSERT_EQUAL(ms->v[1].start, 0x7f0000001000);
    CU_ASSERT_EQUAL(ms->v[1].end, 0x7f0000003000);
    CU_ASSERT_EQUAL(ms->v[1].offset, 0x28000);
    CU_ASSERT_STRING_EQUAL(ms->v[1].path, two_names[1]);
    CU_ASSERT_EQUAL(ms->v[1].perms, 0);
}

static void test_nt_file_kernel_page_size(void)
{
    const uint64_t e[2][3] = {{0x400000, 0x401000, 0}, {0x7f0000001000, 0x7f0000003000, 0x28}};
    struct nbuf nb = {0};
    nt_file(&nb, 2, 4096, e, two_names, 2);
    struct cl_mappings ms = {0};
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), 0);
    check_two_files(&ms);
    cl_mappings_free(&ms);
}

static void test_nt_file_gcore_page_size(void)
{
    const uint64_t e[2][3] = {{0x400000, 0x401000, 0}, {0x7f0000001000, 0x7f0000003000, 0x28000}};
    struct nbuf nb = {0};
    nt_file(&nb, 2, 1, e, two_names, 2);
    struct cl_mappings ms = {0};
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), 0);
    check_two_files(&ms);
    cl_mappings_free(&ms);
}

static void test_nt_file_malformed(void)
{
    const uint64_t e[2][3] = {{0x1000, 0x2000, 0}, {0x3000, 0x4000, 1}};
    struct cl_mappings ms = {0};
    struct nbuf nb = {0};

    /* count larger than the buffer holds */
    nt_file(&nb, 2, 4096, e, two_names, 2);
    memcpy(nb.b, &(uint64_t){5}, 8);   /* 5 * 24 > the 100 bytes after the header */
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);
    memcpy(nb.b, &(uint64_t){UINT64_MAX}, 8);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);
    memcpy(nb.b, &(uint64_t){UINT64_MAX / 24 + 1}, 8);   /* count * 24 would wrap */
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(ms.n, 0);
    /* 3 entries fit only by reading names as entries: then the names run out */
    memcpy(nb.b, &(uint64_t){3}, 8);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);
    cl_mappings_free(&ms);

    /* shorter than the 16-byte header */
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, 15, &ms), CL_E_NOT_CORE);

    /* page size 0 */
    nb.len = 0;
    nt_file(&nb, 2, 0, e, two_names, 2);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);

    /* the last name lacks its NUL */
    nb.len = 0;
    nt_file(&nb, 2, 4096, e, two_names, 2);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len - 1, &ms), CL_E_NOT_CORE);
    cl_mappings_free(&ms);

    /* fewer names than entries */
    nb.len = 0;
    nt_file(&nb, 2, 4096, e, two_names, 1);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);
    cl_mappings_free(&ms);

    /* an empty range (end <= start) */
    const uint64_t bad[1][3] = {{0x2000, 0x2000, 0}};
    nb.len = 0;
    nt_file(&nb, 1, 4096, bad, two_names, 1);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);

    /* offset * page size overflows */
    const uint64_t big[1][3] = {{0x1000, 0x2000, UINT64_MAX / 4096 + 1}};
    nb.len = 0;
    nt_file(&nb, 1, 4096, big, two_names, 1);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(ms.n, 0);
    cl_mappings_free(&ms);

    /* no entries at all is fine */
    nb.len = 0;
    nt_file(&nb, 0, 4096, e, two_names, 0);
    CU_ASSERT_EQUAL(cl_nt_file_parse(nb.b, nb.len, &ms), 0);
    CU_ASSERT_EQUAL(ms.n, 0);
}

static void test_prstatus(void)
{
    unsigned char d[336] = {0};
    int16_t sig = 11;
    int32_t pid = 4242;
    memcpy(d + 12, &sig, 2);
    memcpy(d + 32, &pid, 4);
    struct cl_prstatus ps = {-1, -1};
    CU_ASSERT_EQUAL(cl_prstatus_parse(d, sizeof d, &ps), 0);
    CU_ASSERT_EQUAL(ps.pid, 4242);
    CU_ASSERT_EQUAL(ps.cursig, 11);
    ps = (struct cl_prstatus){-1, -1};
    CU_ASSERT_EQUAL(cl_prstatus_parse(d, sizeof d - 1, &ps), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(cl_prstatus_parse(d, 0, &ps), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(ps.pid, -1);
}

static void test_prpsinfo(void)
{
    unsigned char d[136] = {0};
    int32_t pid = 777;
    memcpy(d + 24, &pid, 4);
    memcpy(d + 40, "0123456789abcdef", 16);   /* a full pr_fname has no NUL */
    memcpy(d + 56, "python3 train.py --epochs 3", 27);
    struct cl_prpsinfo pi;
    memset(&pi, 'x', sizeof pi);
    CU_ASSERT_EQUAL(cl_prpsinfo_parse(d, sizeof d, &pi), 0);
    CU_ASSERT_EQUAL(pi.pid, 777);
    CU_ASSERT_STRING_EQUAL(pi.fname, "0123456789abcdef");
    CU_ASSERT_STRING_EQUAL(pi.psargs, "python3 train.py --epochs 3");
    memset(d + 56, 'a', 80);   /* a full pr_psargs: cut at 80 */
    CU_ASSERT_EQUAL(cl_prpsinfo_parse(d, sizeof d, &pi), 0);
    CU_ASSERT_EQUAL(strlen(pi.psargs), 80);
    pi.pid = -1;
    CU_ASSERT_EQUAL(cl_prpsinfo_parse(d, sizeof d - 1, &pi), CL_E_NOT_CORE);
    CU_ASSERT_EQUAL(pi.pid, -1);
}

static void test_auxv_get(void)
{
    const uint64_t v[] = {AT_PHDR, 0x400040, AT_ENTRY, 0x401020, AT_PAGESZ,
                          4096,    AT_NULL,  0,        AT_BASE,  0x7f0000000000};
    const unsigned char *d = (const unsigned char *)v;
    CU_ASSERT_EQUAL(cl_auxv_get(d, sizeof v, AT_ENTRY), 0x401020);
    CU_ASSERT_EQUAL(cl_auxv_get(d, sizeof v, AT_PAGESZ), 4096);
    CU_ASSERT_EQUAL(cl_auxv_get(d, sizeof v, AT_HWCAP), 0);
    CU_ASSERT_EQUAL(cl_auxv_get(d, sizeof v, AT_BASE), 0);         /* after AT_NULL */
    CU_ASSERT_EQUAL(cl_auxv_get(d, 16 + 15, AT_ENTRY), 0);         /* entry cut short */
    CU_ASSERT_EQUAL(cl_auxv_get(d, 32, AT_ENTRY), 0x401020);
    CU_ASSERT_EQUAL(cl_auxv_get(d, 0, AT_PHDR), 0);
}

/* The build-id of /proc/self/exe as libelf reads it from the section headers. */
static size_t libelf_buildid(unsigned char *out, size_t cap)
{
    size_t found = 0;
    elf_version(EV_CURRENT);
    int fd = open("/proc/self/exe", O_RDONLY);
    if (fd < 0)
        return 0;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    for (Elf_Scn *scn = NULL; elf && !found && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        GElf_Nhdr nh;
        size_t off = 0, name_off, desc_off;
        while (data && !found && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0) {
                found = nh.n_descsz;
                memcpy(out, (char *)data->d_buf + desc_off, found < cap ? found : cap);
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return found;
}

static size_t read_self_head(unsigned char *buf, size_t cap)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, buf, cap, 0);
    close(fd);
    return n > 0 ? (size_t)n : 0;
}

static void test_buildid_of_self(void)
{
    unsigned char head[4096], want[64], have[64];
    size_t nw = libelf_buildid(want, sizeof want);
    CU_ASSERT_FATAL(nw >= 16);   /* the toolchain writes a build-id (sha1: 20 bytes) */
    CU_ASSERT_EQUAL_FATAL(read_self_head(head, sizeof head), sizeof head);
    memset(have, 0, sizeof have);
    CU_ASSERT_EQUAL(cl_buildid_parse(head, sizeof head, have, sizeof have), nw);
    CU_ASSERT_EQUAL(memcmp(have, want, nw), 0);

    /* cap smaller than the id: none returned and nothing copied, since callers compare the
     * returned number of bytes: an id longer than their buffers made them compare past the end) */
    unsigned char small[8];
    memset(have, 0xee, sizeof have);
    CU_ASSERT_EQUAL(cl_buildid_parse(head, sizeof head, have, sizeof small), 0);
    CU_ASSERT_EQUAL(have[0], 0xee);
}

static void test_buildid_garbage(void)
{
    unsigned char head[4096], out[64], want[64];
    size_t nw = libelf_buildid(want, sizeof want);
    CU_ASSERT_EQUAL_FATAL(read_self_head(head, sizeof head), sizeof head);

    /* every truncation of a real header: either no id or exactly the right one */
    for (size_t len = 0; len <= sizeof head; len += 7) {
        unsigned char *copy = malloc(len ? len : 1);   /* exact size: ASan sees any overread */
        CU_ASSERT_FATAL(copy != NULL);
        memcpy(copy, head, len);
        size_t n = cl_buildid_parse(copy, len, out, sizeof out);
        CU_ASSERT(n == 0 || (n == nw && memcmp(out, want, nw) == 0));
        if (len < sizeof(Elf64_Ehdr))
            CU_ASSERT_EQUAL(n, 0);
        free(copy);
    }

    /* random bytes, and random bytes behind a plausible ELF header */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 200; round++) {
        unsigned char g[512];
        for (size_t i = 0; i < sizeof g; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            g[i] = (unsigned char)x;
        }
        CU_ASSERT_EQUAL(cl_buildid_parse(g, sizeof g, out, sizeof out), 0);
        if (round % 2) {
            Elf64_Ehdr eh;   /* a real ELF header; phdrs and notes are garbage */
            memcpy(&eh, head, sizeof eh);
            eh.e_phoff = 64;
            memcpy(g, &eh, sizeof eh);
        }
        cl_buildid_parse(g, sizeof g, out, sizeof out);   /* must not crash */
    }

    /* 32-bit class, or a phoff beyond the buffer */
    unsigned char c[4096];
    memcpy(c, head, sizeof c);
    c[EI_CLASS] = ELFCLASS32;
    CU_ASSERT_EQUAL(cl_buildid_parse(c, sizeof c, out, sizeof out), 0);
    memcpy(c, head, sizeof c);
    Elf64_Ehdr eh;
    memcpy(&eh, c, sizeof eh);
    eh.e_phoff = 1u << 20;
    memcpy(c, &eh, sizeof eh);
    CU_ASSERT_EQUAL(cl_buildid_parse(c, sizeof c, out, sizeof out), 0);
}

void register_target_corenotes_tests(void)
{
    static const struct tu_test tests[] = {
        {"notes_foreach walks notes", test_foreach_walks_notes},
        {"notes_foreach stop and edges", test_foreach_stops_and_edges},
        {"notes_foreach name without NUL", test_foreach_name_without_nul},
        {"notes_foreach overrun", test_foreach_overrun},
        {"NT_FILE page size 4096 (kernel)", test_nt_file_kernel_page_size},
        {"NT_FILE page size 1 (gcore)", test_nt_file_gcore_page_size},
        {"NT_FILE malformed", test_nt_file_malformed},
        {"prstatus", test_prstatus},
        {"prpsinfo", test_prpsinfo},
        {"auxv_get", test_auxv_get},
        {"buildid of /proc/self/exe", test_buildid_of_self},
        {"buildid on garbage and truncation", test_buildid_garbage},
        {NULL, NULL},
    };
    tu_add_suite("target/corenotes", tests);
}
