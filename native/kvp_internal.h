/* kvp_internal.h - shared by the library's C files; not part of the API. */
#ifndef KVP_INTERNAL_H
#define KVP_INTERNAL_H
#include <stdint.h>

/* Per-thread count of kernel entry calls, for tests that check "one downcall per request". A
 * thread-local counter costs one add and never bounces a cache line between reader threads. */
extern __thread uint64_t kvp_calls_tls;
#define KVP_COUNT_CALL() (kvp_calls_tls++)

#endif
