#include "report/info.h"

#include <string.h>

#include "report/json.h"
#include "report/warnings.h"

static const char *kind_name(enum cl_target_kind k)
{
    return k == CL_TARGET_LIVE   ? "live"
           : k == CL_TARGET_CORE ? "core"
           : k == CL_TARGET_DUMP ? "dump"
                                 : "gdb";
}

static const char *kind_words(enum cl_target_kind k)
{
    return k == CL_TARGET_LIVE   ? "live process"
           : k == CL_TARGET_CORE ? "core file"
                                 : "gdb inferior";
}

static const char *debug_level(const struct cl_python_info *py)
{
    return py->has_dwarf ? "DWARF" : py->has_symtab ? ".symtab only" : ".dynsym only (stripped)";
}

const char *cl_target_words(const struct cl_target *t, char *buf, size_t cap)
{
    /* A dump says what it was made from, and then reads like that target. */
    snprintf(buf, cap, "%s%s, pid %d", t->kind == CL_TARGET_DUMP ? "dump of a " : "",
             kind_words(t->source_kind), t->pid);
    return buf;
}

void cl_report_info_text(FILE *out, const struct cl_target *t, const struct cl_python_info *py,
                         const struct cl_torch_info *tc, const struct cl_rank *rank,
                         const struct cl_report_notes *w)
{
    char words[96];
    fprintf(out, "target      %s%s%s\n", cl_target_words(t, words, sizeof words),
            t->allocator_only ? " (--allocator-only: no Python objects)" : "",
            t->redacted ? " (--redact: the contents of strs and bytes left out)" : "");
    if (t->ns_pid && t->ns_pid != t->pid)   /* in a container: the pid it knows itself by */
        fprintf(out, "  ns pid    %d (in its own PID namespace)\n", t->ns_pid);
    if (t->source_kind == CL_TARGET_CORE)
        fprintf(out, "signal      %s\n",
                t->signal ? strsignal(t->signal) : "none (made by gcore?)");
    fprintf(out, "executable  %s\n", t->exe_path ? t->exe_path : "(unknown)");
    if (t->note)
        fprintf(out, "note        %s\n", t->note);
    if (rank->rank >= 0)
        fprintf(out, "rank        %d of %d, local rank %d (from its environment)\n", rank->rank,
                rank->world_size, rank->local_rank);
    fprintf(out, "threads     %zu:", t->nthreads);
    for (size_t i = 0; i < t->nthreads && i < 16; i++)
        fprintf(out, " %d", t->threads[i].tid);
    fprintf(out, "%s\n", t->nthreads > 16 ? " ..." : "");
    if (t->kind == CL_TARGET_LIVE && t->resumed) {
        fprintf(out, "stopped     %.3f s, while %llu MiB of its memory was copied",
                t->stopped_seconds, (unsigned long long)(t->copied_bytes >> 20));
        if (t->unread_bytes)
            fprintf(out, " (not the %llu MiB that a walk made as it ran did not read)",
                    (unsigned long long)(t->unread_bytes >> 20));
        fprintf(out, "; then resumed\n");
    } else if (t->kind == CL_TARGET_LIVE && t->copied_bytes)
        fprintf(out, "stopped     while culeak reads it; %.1f MiB of its memory copied as read\n",
                (double)t->copied_bytes / (1 << 20));
    else if (t->kind == CL_TARGET_LIVE)
        fprintf(out, "stopped     while culeak reads it\n");
    fprintf(out, "python      %s%s (from %s%s%s)\n", py->version,
            py->free_threaded ? " free-threaded" : "", py->version_source,
            py->confirmed_by[0] ? "; agrees: " : "", py->confirmed_by);
    fprintf(out, "  runtime   %s in %s (%s), _PyRuntime at 0x%llx (%s)\n",
            py->shared ? "shared libpython" : "static", py->module->path, debug_level(py),
            (unsigned long long)py->runtime_addr, py->runtime_found_by);
    if (py->build[0])
        fprintf(out, "  build     %s\n", py->build);
    if (!tc->loaded) {
        fprintf(out, "torch       not loaded\n");
    } else {
        fprintf(out, "torch       %s (%s)\n", tc->version[0] ? tc->version : "version unknown",
                tc->version_file[0] ? tc->version_file : "version.py not found");
        fprintf(out, "  cuda      %s; libc10_cuda.so %s\n",
                tc->cuda[0]      ? tc->cuda
                : tc->cuda_build ? "CUDA build"
                                 : "CPU-only build",
                tc->c10_cuda_mapped ? "mapped" : "not mapped");
        for (size_t i = 0; i < tc->nlibs; i++)
            fprintf(out, "  lib       %s\n", tc->libs[i]);
    }
    cl_report_warnings(out, NULL, w, "warning     ");
}

void cl_json_rank(struct cl_json *j, const struct cl_rank *rank)
{
    cl_json_key(j, "rank");
    cl_json_count_or_null(j, rank->rank);
    cl_json_key(j, "local_rank");
    cl_json_count_or_null(j, rank->local_rank);
    cl_json_key(j, "world_size");
    cl_json_count_or_null(j, rank->world_size);
}

static void target_json(struct cl_json *j, const struct cl_target *t)
{
    cl_json_key(j, "target");
    cl_json_begin_object(j);
    cl_json_key(j, "kind");
    cl_json_string(j, kind_name(t->kind));
    if (t->kind == CL_TARGET_DUMP) {
        cl_json_key(j, "dumped_from");
        cl_json_string(j, kind_name(t->source_kind));
    }
    if (t->allocator_only) {
        cl_json_key(j, "allocator_only");
        cl_json_bool(j, true);
    }
    if (t->redacted) {
        cl_json_key(j, "redacted");
        cl_json_bool(j, true);
    }
    cl_json_key(j, "pid");
    cl_json_int(j, t->pid);
    /* the pid in its own PID namespace; pid's on the host */
    if (t->source_kind == CL_TARGET_LIVE) {
        cl_json_key(j, "ns_pid");
        cl_json_int(j, t->ns_pid ? t->ns_pid : t->pid);
    }
    cl_json_key(j, "executable");
    cl_json_string(j, t->exe_path);
    if (t->note) {
        cl_json_key(j, "note");
        cl_json_string(j, t->note);
    }
    if (t->source_kind == CL_TARGET_CORE) {
        cl_json_key(j, "signal");
        cl_json_int(j, t->signal);
    }
    cl_json_key(j, "threads");
    cl_json_begin_array(j);
    for (size_t i = 0; i < t->nthreads; i++)
        cl_json_int(j, t->threads[i].tid);
    cl_json_end_array(j);
    if (t->kind == CL_TARGET_LIVE) {   /* not resumed: stopped for as long as culeak read it */
        cl_json_key(j, "copied_bytes");
        cl_json_int(j, (long long)t->copied_bytes);
        cl_json_key(j, "stopped_microseconds");
        if (t->resumed)
            cl_json_int(j, (long long)(t->stopped_seconds * 1e6));
        else
            cl_json_null(j);
        /* left out of the copy as a scout did not read it; whether a walk then needed some, and
         * this is the inspection done again without leaving any out */
        cl_json_key(j, "unread_bytes");
        cl_json_int(j, (long long)t->unread_bytes);
        cl_json_key(j, "redone");
        cl_json_bool(j, t->redone);
    }
    cl_json_end_object(j);
}

static void python_json(struct cl_json *j, const struct cl_python_info *py)
{
    cl_json_key(j, "python");
    cl_json_begin_object(j);
    cl_json_key(j, "version");
    cl_json_string(j, py->version);
    cl_json_key(j, "version_hex");
    cl_json_hex(j, py->version_hex);
    cl_json_key(j, "detected_by");
    cl_json_string(j, py->version_source);
    cl_json_key(j, "confirmed_by");
    cl_json_begin_array(j);
    char buf[sizeof py->confirmed_by];
    memcpy(buf, py->confirmed_by, sizeof buf);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        cl_json_string(j, tok + (*tok == ' '));
    cl_json_end_array(j);
    cl_json_key(j, "build");
    cl_json_string(j, py->build[0] ? py->build : NULL);
    cl_json_key(j, "linkage");
    cl_json_string(j, py->shared ? "shared" : "static");
    cl_json_key(j, "module");
    cl_json_string(j, py->module->path);
    cl_json_key(j, "runtime_address");
    cl_json_hex(j, py->runtime_addr);
    cl_json_key(j, "runtime_found_by");
    cl_json_string(j, py->runtime_found_by);
    cl_json_key(j, "debug_info");
    cl_json_bool(j, py->has_dwarf);
    cl_json_key(j, "symtab");
    cl_json_bool(j, py->has_symtab);
    cl_json_key(j, "free_threaded");
    cl_json_bool(j, py->free_threaded);
    cl_json_end_object(j);
}

static void torch_json(struct cl_json *j, const struct cl_torch_info *tc)
{
    cl_json_key(j, "torch");
    cl_json_begin_object(j);
    cl_json_key(j, "loaded");
    cl_json_bool(j, tc->loaded);
    cl_json_key(j, "version");
    cl_json_string(j, tc->version[0] ? tc->version : NULL);
    cl_json_key(j, "version_file");
    cl_json_string(j, tc->version_file[0] ? tc->version_file : NULL);
    cl_json_key(j, "cuda");
    cl_json_string(j, tc->cuda[0] ? tc->cuda : NULL);
    cl_json_key(j, "cuda_build");
    cl_json_bool(j, tc->cuda_build);
    cl_json_key(j, "c10_cuda_mapped");
    cl_json_bool(j, tc->c10_cuda_mapped);
    cl_json_key(j, "libraries");
    cl_json_begin_array(j);
    for (size_t i = 0; i < tc->nlibs; i++)
        cl_json_string(j, tc->libs[i]);
    cl_json_end_array(j);
    cl_json_end_object(j);
}

void cl_report_info_json(FILE *out, const struct cl_target *t, const struct cl_python_info *py,
                         const struct cl_torch_info *tc, const struct cl_rank *rank,
                         const struct cl_report_notes *w)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    target_json(&j, t);
    python_json(&j, py);
    cl_json_key(&j, "rank");
    cl_json_begin_object(&j);
    cl_json_rank(&j, rank);
    cl_json_end_object(&j);
    torch_json(&j, tc);
    cl_report_json_end(out, &j, w);
}
