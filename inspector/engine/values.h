/* Option values: one parser per kind of value (counts, sizes, addresses, devices, seconds), so
 * the CLI and the gdb plugin (both through engine/command.c) accept and refuse the same text.
 * Each returns 0, or CL_E_USAGE with a message naming the option and what it wants. */
#ifndef CULEAK_ENGINE_VALUES_H
#define CULEAK_ENGINE_VALUES_H

#include <stdint.h>

#include "util/error.h"

/* A decimal whole number from min to max: digits only (no sign, no space), no overflow. */
int cl_value_count(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out,
                   struct cl_error *err);

/* A byte count: a whole number with an optional unit K, M, G or T (powers of 1024; "KiB", "KB"
 * and lower case read the same), e.g. 1M = 1048576. */
int cl_value_size(const char *opt, const char *s, uint64_t *out, struct cl_error *err);

/* A non-zero address in hex, 0x optional, that fits in 64 bits. */
int cl_value_addr(const char *opt, const char *s, uint64_t *out, struct cl_error *err);

/* Seconds from min to max, a decimal fraction allowed (0.5). */
int cl_value_seconds(const char *opt, const char *s, double min, double max, double *out,
                     struct cl_error *err);

/* A device as torch spells it: "cpu", "cuda", "cuda:N", a bare CUDA index N, or "all". */
enum cl_device_kind { CL_DEVICE_ALL, CL_DEVICE_CPU, CL_DEVICE_CUDA };
struct cl_device_choice {
    enum cl_device_kind kind;
    int index;                  /* CUDA: the device index, or -1 for every CUDA device */
};
int cl_value_device(const char *opt, const char *s, struct cl_device_choice *out,
                    struct cl_error *err);

#endif
