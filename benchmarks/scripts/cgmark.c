/*
 * Callgrind's client requests as two C functions a Java driver calls through FFM
 * (benchmarks/scripts/RunOpenCount.java): zero every thread's counters once the JIT is warm, dump
 * them after the counted cycles. Outside valgrind each request is a few no-op instructions.
 * Build: cc -O2 -shared -fPIC -o /tmp/libcgmark.so benchmarks/scripts/cgmark.c
 */
#include <valgrind/callgrind.h>

void cgmark_zero(void) { CALLGRIND_ZERO_STATS; }

void cgmark_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
