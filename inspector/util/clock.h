/* The pairs of wall-clock time and processor ticks that torch converts its trace's times with
 * (c10::ApproximateClockToUnixTimeConverter): torch stamps each trace entry with the TSC, and
 * turns ticks into unix time by pairs measured when its allocator was made and again when a
 * snapshot is taken. Reading from outside, culeak measures the second set itself: ticks count at
 * one rate on the machine that runs the process, so a measurement there at any later moment
 * gives the rate torch's own would. */
#ifndef CULEAK_UTIL_CLOCK_H
#define CULEAK_UTIL_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CL_CLOCK_PAIRS 1001   /* torch's replicates: the median of so many rates is used */

struct cl_clock_pair {
    int64_t unix_ns;   /* CLOCK_REALTIME, nanoseconds */
    uint64_t ticks;    /* the TSC, midway between reads before and after it */
};

/* Measures CL_CLOCK_PAIRS pairs as torch's measurePairs() does into out; false where torch
 * stamps no TSC (not x86-64: another clock culeak does not read). */
bool cl_clock_measure(struct cl_clock_pair *out);

#endif
