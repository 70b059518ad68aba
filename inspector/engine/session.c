#include "engine/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/referents.h"
#include "cudacache/mempools.h"
#include "cudacache/workspaces.h"
#include "util/notes.h"

/* A model built, or refused, on reads of a process that then went away is not reported: what
 * went wrong is that the process went away (its reads failed, or its pages were half read). */
static int settle(const struct cl_session *s, int rc, struct cl_error *err)
{
    return s->target->gone ? cl_target_went_away(s->target, err) : rc;
}

int cl_session_open(const struct cl_session_options *opt, struct cl_session **out,
                    struct cl_error *err)
{
    struct cl_target *t;
    /* before the stop, which NVML's first call could lengthen by far */
    struct cl_driver_memory driver = {CL_DRIVER_NOT_ASKED};
    if (!opt->dump && !opt->core && opt->driver_memory)
        cl_driver_memory_read(opt->pid, &driver);
    int rc = opt->dump   ? cl_target_open_dump(opt->dump, &opt->open, &t, err)
             : opt->core ? cl_target_open_core(opt->core, &opt->open, &t, err)
                         : cl_target_open_live(opt->pid, &opt->open, &t, err);
    if (!rc && !(rc = cl_session_open_target(t, out, err)))
        (*out)->driver = driver;
    return rc;
}

int cl_session_open_target(struct cl_target *t, struct cl_session **out, struct cl_error *err)
{
    *out = NULL;
    struct cl_session *s = calloc(1, sizeof *s);
    if (!s) {
        cl_target_close(t);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    s->target = t;
    int rc = cl_symbols_load(s->target, &s->symbols, err);
    if (!rc)
        rc = cl_python_detect(s->target, s->symbols, &s->python, err);
    if (!rc) {
        cl_torch_detect(s->target, &s->torch);
        cl_rank_detect(s->target, s->symbols, &s->rank);
    }
    if (rc) /* no runtime found in a process killed as its maps were read: it went away */
        cl_target_check_vanished(s->target);
    if ((rc = settle(s, rc, err))) {
        cl_session_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void cl_session_close(struct cl_session *s)
{
    if (!s)
        return;
    if (s->holders_built)
        cl_holders_free(&s->holders);
    if (s->allocator_built)
        cc_free(&s->allocator);
    if (s->tensors_built)
        torch_tensors_free(&s->tensors);
    torch_guards_free(&s->type_readers.guards);
    if (s->heap_built)
        py_heap_free(&s->heap);
    cl_symbols_close(s->symbols);
    cl_target_close(s->target);
    free(s);
}

int cl_session_heap(struct cl_session *s, const struct py_walk_options *opt, struct py_heap **out,
                    struct cl_error *err)
{
    if (s->target->allocator_only)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "this dump holds no Python objects, so no tensors or holders: "
                            "it was made with culeak dump --allocator-only");
    int rc = 0;
    if (!s->heap_built && !s->target->gone) {
        const struct cl_python_info *py = &s->python;
        struct py_runtime_site site = {py->module, py->runtime_addr, py->version_hex, py->version,
                                       py->free_threaded};
        struct py_walk_options walk = opt ? *opt : (struct py_walk_options){0};
        torch_dynamo_cache_init(&s->dynamo, s->target, s->symbols, &s->torch);
        walk.code_extra = &s->dynamo.reader;
        walk.ntype_readers = torch_type_readers_init(&s->type_readers, &s->torch);
        walk.type_readers = s->type_readers.v;
        rc = py_runtime_open(s->target, &site, &s->py_runtime, err);
        if (!rc && !(rc = py_heap_build(&s->py_runtime, &walk, &s->heap, err))) {
            s->heap_built = true;
            py_referents_note_skipped(&s->heap.objects, &s->heap.warnings);
            if (s->dynamo.unread)
                cl_note_add(&s->heap.warnings,
                            "torch.compile's cache on %llu code objects was not read (%s): what "
                            "it holds (guards, compiled code, the frame state) is held from C",
                            (unsigned long long)s->dynamo.unread,
                            s->dynamo.row < 0     ? "no table row for this torch release"
                            : s->dynamo.index < 0 ? "libtorch_python has no extra_index symbol"
                                                  : "it does not check out");
        }
    }
    if ((rc = settle(s, rc, err)))
        return rc;
    *out = &s->heap;
    return 0;
}

/* A core read on another machine needs torch's own libraries (their types, vtables and code are
 * in no core): without them, or with another build at the same path, tensors would silently not
 * be recognised, and "0 tensors" is a wrong answer. */
static int torch_files_here(struct cl_session *s, struct cl_error *err)
{
    for (size_t i = 0; i < s->torch.nlibs; i++) {
        const char *path = s->torch.libs[i], *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strncmp(base, "libc10", 6) != 0 && strncmp(base, "libtorch", 8) != 0)
            continue;
        int rc = cl_target_file_status(s->target, path);
        if (rc == CL_E_IO)
            return cl_error_set(err, CL_E_IO,
                                "the core needs %s, which is not on this machine: culeak reads "
                                "torch's types and code from it; give the training machine's "
                                "files with --sysroot DIR (its root as mounted here) or "
                                "--lib-path DIR",
                                path);
        if (rc)
            return cl_error_set(err, CL_E_EXE_MISMATCH,
                                "%s on this machine is another build than the one the job ran "
                                "(build-id differs); give the job's own files with --sysroot DIR "
                                "or --lib-path DIR",
                                path);
    }
    return 0;
}

int cl_session_tensors(struct cl_session *s, const struct py_walk_options *opt,
                       struct torch_tensors **out, struct cl_error *err)
{
    struct py_heap *h;
    int rc = cl_session_heap(s, opt, &h, err);
    if (rc)
        return rc;
    if (!s->tensors_built && s->torch.loaded && (rc = torch_files_here(s, err)))
        return rc;
    if (!s->tensors_built) {
        /* Without torch/version.py (a core brought without its site-packages) the running
         * interpreter still knows its torch version. */
        if (s->torch.loaded && !s->torch.version[0] &&
            py_heap_module_str(h, "torch.version", "__version__", s->torch.version,
                               sizeof s->torch.version))
            snprintf(s->torch.version_file, sizeof s->torch.version_file,
                     "(from the heap: torch.version.__version__)");
        if (!(rc = torch_tensors_collect(h, &s->torch, &s->tensors, err)))
            s->tensors_built = true;
        if ((rc = settle(s, rc, err)))
            return rc;
    }
    if (out)
        *out = &s->tensors;
    return 0;
}

int cl_session_allocator(struct cl_session *s, const char *force, struct cc_allocator **out,
                         struct cl_error *err)
{
    int rc = 0;
    if (!s->allocator_built && s->torch.loaded && (rc = torch_files_here(s, err)))
        return rc;
    if (!s->allocator_built && !s->target->gone &&
        !(rc = cc_walk(s->target, s->symbols, &s->torch, force, &s->allocator, err))) {
        torch_workspaces_name(s->target, s->symbols, &s->torch, &s->allocator);
        s->allocator_built = true;
    }
    if ((rc = settle(s, rc, err)))
        return rc;
    *out = &s->allocator;
    return 0;
}

int cl_session_holders(struct cl_session *s, const struct py_walk_options *opt, const char *force,
                       const struct cl_drill_options *drill, struct cl_holders **out,
                       struct cl_error *err)
{
    struct torch_tensors *tt;
    int rc = cl_session_tensors(s, opt, &tt, err);
    if (rc)
        return rc;
    if (!s->holders_built) {
        struct cc_allocator *a = NULL;
        struct cl_error no_allocator;
        if (s->torch.c10_cuda_mapped && cl_session_allocator(s, force, &a, &no_allocator))
            a = NULL;
        if (!(rc = cl_holders_build(&s->heap, tt, a, drill, &s->holders, err)))
            s->holders_built = true;
        if (!rc && a)
            cc_mempools_name(&s->heap, &s->torch, a);
        if ((rc = settle(s, rc, err)))
            return rc;
    }
    if (out)
        *out = &s->holders;
    return 0;
}
