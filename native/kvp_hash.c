/*
 * kvp_hash.c - batch block hashing (docs/SPEC.md section 2). XXH3 comes from the system's xxHash
 * (Debian libxxhash-dev), inlined so the library has no run-time dependency on libxxhash.
 */
#define KVP_BUILDING_LIBRARY 1
#include "kvprefix.h"
#include "kvp_internal.h" /* XXH3, inlined */

#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libkvprefix is built for little-endian hosts only (tokens are hashed as their in-memory bytes)"
#endif

uint32_t kvp_version(void) { return (uint32_t)KVP_VERSION; }

#ifdef KVP_COUNT_CALLS
__thread uint64_t kvp_calls_tls = 0;
uint64_t kvp_thread_calls(void) { return kvp_calls_tls; }
#else
uint64_t kvp_thread_calls(void) { return KVP_NOT_COUNTED; }
#endif

uint64_t kvp_xxh3(const void *data, int64_t len, uint64_t seed) {
    if (len <= 0) return XXH3_64bits_withSeed(NULL, 0, seed);
    return XXH3_64bits_withSeed(data, (size_t)len, seed);
}

int64_t kvp_chain(const uint64_t *local, int64_t n, uint64_t chain_seed,
                  int32_t has_parent, uint64_t parent, uint64_t *chain_out) {
    KVP_COUNT_CALL();
    if (n < 0 || (n > 0 && (local == NULL || chain_out == NULL))) return KVP_EINVAL;
    if (n == 0) return 0;
    uint64_t c = has_parent ? kvp_chain_step(parent, local[0], chain_seed) : local[0];
    chain_out[0] = c;
    for (int64_t i = 1; i < n; i++) {
        c = kvp_chain_step(c, local[i], chain_seed);
        chain_out[i] = c;
    }
    return n;
}

int64_t kvp_hash_blocks(const uint32_t *tokens, int64_t n_tokens, int32_t block_size,
                        uint64_t seed, uint64_t chain_seed,
                        uint64_t *local_out, uint64_t *chain_out) {
    KVP_COUNT_CALL();
    if (block_size < 1 || n_tokens < 0) return KVP_EINVAL;
    const int64_t blocks = n_tokens / block_size;
    if (blocks == 0) return 0;
    if (tokens == NULL || local_out == NULL) return KVP_EINVAL;
    if (chain_out == NULL) {
        for (int64_t b = 0; b < blocks; b++) {
            local_out[b] = kvp_block_hash(tokens + b * block_size, block_size, seed);
        }
        return blocks;
    }
    uint64_t c = 0;
    for (int64_t b = 0; b < blocks; b++) {
        const uint64_t l = kvp_block_hash(tokens + b * block_size, block_size, seed);
        local_out[b] = l;
        c = (b == 0) ? l : kvp_chain_step(c, l, chain_seed);
        chain_out[b] = c;
    }
    return blocks;
}

int64_t kvp_hash_blocks_mm(const uint32_t *tokens, int64_t n_tokens, int32_t block_size,
                           uint64_t seed, const int32_t *mm_offsets,
                           const uint64_t *mm_hashes, uint64_t chain_seed,
                           uint64_t *local_out, uint64_t *chain_out) {
    KVP_COUNT_CALL();
    if (block_size < 1 || n_tokens < 0) return KVP_EINVAL;
    const int64_t blocks = n_tokens / block_size;
    if (blocks == 0) return 0;
    if (tokens == NULL || local_out == NULL || mm_offsets == NULL) return KVP_EINVAL;
    if (mm_offsets[0] < 0) return KVP_EINVAL;
    for (int64_t b = 0; b < blocks; b++) {
        if (mm_offsets[b + 1] < mm_offsets[b]) return KVP_EINVAL;
    }
    if (mm_offsets[blocks] > mm_offsets[0] && mm_hashes == NULL) return KVP_EINVAL;
    const size_t block_bytes = (size_t)block_size * sizeof(uint32_t);
    /* A state on the stack must be initialised before its first reset_withSeed: xxHash compares the
     * new seed with the state's old one and skips deriving the secret when they are equal. */
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    uint64_t c = 0;
    for (int64_t b = 0; b < blocks; b++) {
        const uint32_t *block = tokens + b * block_size;
        const int32_t lo = mm_offsets[b], hi = mm_offsets[b + 1];
        uint64_t l;
        if (lo == hi) {
            l = kvp_block_hash(block, block_size, seed);
        } else {
            XXH3_64bits_reset_withSeed(&st, seed);
            XXH3_64bits_update(&st, block, block_bytes);
            XXH3_64bits_update(&st, mm_hashes + lo, (size_t)(hi - lo) * sizeof(uint64_t));
            l = XXH3_64bits_digest(&st);
        }
        local_out[b] = l;
        if (chain_out != NULL) {
            c = (b == 0) ? l : kvp_chain_step(c, l, chain_seed);
            chain_out[b] = c;
        }
    }
    return blocks;
}
