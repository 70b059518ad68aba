#include "engine/values.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Digits in base 10 or 16 to the end of s or to *end, refusing overflow. strtoull is not used:
 * it takes a sign (and negates "-5" into a huge number), leading space and wraps silently. */
static int digits(const char *s, unsigned base, uint64_t *out, const char **end)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p; p++) {
        int d = isdigit((unsigned char)*p)                  ? *p - '0'
                : base == 16 && isxdigit((unsigned char)*p) ? tolower((unsigned char)*p) - 'a' + 10
                                                            : -1;
        if (d < 0)
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            return -1;   /* past 2^64 */
        v = v * base + (uint64_t)d;
    }
    if (p == s)
        return -1;
    *out = v;
    *end = p;
    return 0;
}

int cl_value_count(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out,
                   struct cl_error *err)
{
    const char *end;
    uint64_t v;
    if (digits(s, 10, &v, &end) || *end || v < min || v > max)
        return cl_error_set(err, CL_E_USAGE, "%s wants a whole number from %llu to %llu, not '%s'",
                            opt, (unsigned long long)min, (unsigned long long)max, s);
    *out = v;
    return 0;
}

/* The power of 1024 a unit names (K 1, M 2, G 3, T 4; none 0), or -1. */
static int unit_power(const char *u)
{
    static const char units[] = "KMGT";
    if (!*u)
        return 0;
    const char *at = strchr(units, toupper((unsigned char)*u));
    if (!at || !*at)
        return -1;
    const char *rest = u + 1;
    if (*rest && strcasecmp(rest, "B") != 0 && strcasecmp(rest, "iB") != 0)
        return -1;
    return (int)(at - units) + 1;
}

int cl_value_size(const char *opt, const char *s, uint64_t *out, struct cl_error *err)
{
    const char *end;
    uint64_t v;
    int power = -1;
    if (digits(s, 10, &v, &end) == 0)
        power = unit_power(end);
    if (power >= 0 && v > UINT64_MAX >> (10 * power))
        power = -1;   /* past 2^64 bytes */
    if (power < 0)
        return cl_error_set(err, CL_E_USAGE,
                            "%s wants a byte count (a whole number, optionally "
                            "with K, M, G or T: powers of 1024), not '%s'",
                            opt, s);
    *out = v << (10 * power);
    return 0;
}

int cl_value_addr(const char *opt, const char *s, uint64_t *out, struct cl_error *err)
{
    const char *end, *hex = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? s + 2 : s;
    uint64_t v;
    if (digits(hex, 16, &v, &end) || *end || v == 0)
        return cl_error_set(err, CL_E_USAGE,
                            "%s wants a non-zero hex address of at most 64 bits, "
                            "not '%s'",
                            opt, s);
    *out = v;
    return 0;
}

int cl_value_seconds(const char *opt, const char *s, double min, double max, double *out,
                     struct cl_error *err)
{
    /* digits and one point only: strtod alone would take "0x10", "1e3", "inf" and a sign */
    size_t n = strspn(s, "0123456789"), point = s[n] == '.';
    bool plain = n > 0 && strspn(s + n + point, "0123456789") == strlen(s + n + point);
    double v = plain ? strtod(s, NULL) : 0;
    if (!plain || !(v >= min && v <= max))
        return cl_error_set(err, CL_E_USAGE, "%s wants seconds from %g to %g, not '%s'", opt, min,
                            max, s);
    *out = v;
    return 0;
}

/* The highest CUDA device index torch has (c10::DeviceIndex is an int8_t). */
#define MAX_DEVICE_INDEX 127

int cl_value_device(const char *opt, const char *s, struct cl_device_choice *out,
                    struct cl_error *err)
{
    const char *index = NULL;
    if (strcmp(s, "all") == 0)
        *out = (struct cl_device_choice){CL_DEVICE_ALL, -1};
    else if (strcmp(s, "cpu") == 0)
        *out = (struct cl_device_choice){CL_DEVICE_CPU, -1};
    else if (strcmp(s, "cuda") == 0)
        *out = (struct cl_device_choice){CL_DEVICE_CUDA, -1};
    else
        index = strncmp(s, "cuda:", 5) == 0 ? s + 5 : s;
    if (index) {
        const char *end;
        uint64_t v;
        if (digits(index, 10, &v, &end) || *end || v > MAX_DEVICE_INDEX)
            return cl_error_set(err, CL_E_USAGE,
                                "%s wants cpu, cuda, cuda:N, a CUDA device "
                                "number N (0 to %d) or all, not '%s'",
                                opt, MAX_DEVICE_INDEX, s);
        *out = (struct cl_device_choice){CL_DEVICE_CUDA, (int)v};
    }
    return 0;
}
