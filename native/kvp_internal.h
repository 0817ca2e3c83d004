/* kvp_internal.h - shared by the library's C files; not part of the API. */
#ifndef KVP_INTERNAL_H
#define KVP_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

/* Per-thread count of kernel entry calls, for the tests that check "one downcall per request".
 * Compiled in only for the test build (CMake target kvprefix_test, -DKVP_COUNT_CALLS); the packaged
 * library has neither the counter nor its increments. A thread-local counter costs one add and
 * never bounces a cache line between reader threads. */
#ifdef KVP_COUNT_CALLS
extern __thread uint64_t kvp_calls_tls;
#define KVP_COUNT_CALL() (kvp_calls_tls++)
#else
#define KVP_COUNT_CALL() ((void)0)
#endif

/* The one block-size specialisation: XXH3 of a block of block_size tokens, where the common block
 * sizes get a call with a constant length, which lets the compiler specialise XXH3's input paths
 * (about 1.4x faster at 16 tokens). Loops over many blocks call it as is: the switch is on a
 * loop-invariant value, which the compiler hoists out of the loop. */
static inline uint64_t kvp_block_hash(const uint32_t *block, int32_t block_size, uint64_t seed) {
    switch (block_size) {
        case 8: return XXH3_64bits_withSeed(block, 8 * sizeof(uint32_t), seed);
        case 16: return XXH3_64bits_withSeed(block, 16 * sizeof(uint32_t), seed);
        case 32: return XXH3_64bits_withSeed(block, 32 * sizeof(uint32_t), seed);
        case 64: return XXH3_64bits_withSeed(block, 64 * sizeof(uint32_t), seed);
        default: return XXH3_64bits_withSeed(block, (size_t)block_size * sizeof(uint32_t), seed);
    }
}

/* The one chain step (docs/SPEC.md section 2.2): XXH3 of le64(parent) ++ le64(local) with the chain
 * seed. On a little-endian host the two-element array already has that byte order. */
static inline uint64_t kvp_chain_step(uint64_t parent, uint64_t local, uint64_t chain_seed) {
    const uint64_t pair[2] = {parent, local};
    return XXH3_64bits_withSeed(pair, sizeof pair, chain_seed);
}

#endif
