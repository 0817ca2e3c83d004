/*
 * kvprefix.h - the C API of libkvprefix, the only contract between the Java library and native code.
 *
 * Conventions (every function):
 *  - Symbols are prefixed kvp_; nothing else is exported.
 *  - Fixed-width types only. Tokens are unsigned 32-bit values; hashes are unsigned 64-bit values.
 *  - Buffers are owned by the caller. Lengths are explicit and counted in elements, not bytes.
 *  - Byte order: a block's bytes are its tokens as 4-byte little-endian values, in order. This
 *    library is built for little-endian hosts only (x86_64, aarch64), where a uint32_t array in
 *    memory already has that byte order.
 *  - Functions are pure: no global state, no allocation, safe to call from any number of threads.
 *  - Return values: a non-negative count on success; KVP_EINVAL (-1) if an argument breaks a stated
 *    precondition. The Java side checks every precondition before calling, so KVP_EINVAL means a
 *    bug on the calling side; nothing is written to the output buffers in that case.
 *
 * Hashing (kvprefix CONTRACT section 2, bit-compatible with NVIDIA Dynamo's router):
 *  - local hash L of a block = XXH3_64bits_withSeed(block bytes [++ extras], seed)
 *  - chain hash: C[0] = L[0] (or chain(parent, L[0]) when the sequence continues a parent),
 *    C[i] = XXH3_64bits_withSeed(le64(C[i-1]) ++ le64(L[i]), chain_seed)   (16 bytes, parent first)
 *  - a request of n tokens has floor(n / block_size) blocks; a partial tail is never hashed.
 */
#ifndef KVPREFIX_H
#define KVPREFIX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KVP_BUILDING_LIBRARY)
#define KVP_API __attribute__((visibility("default")))
#else
#define KVP_API
#endif

/* API version: major in the high 16 bits, minor in the low 16 bits. Java refuses a library whose
 * major differs from its own or whose minor is older. */
#define KVP_VERSION_MAJOR 1
#define KVP_VERSION_MINOR 0
#define KVP_VERSION ((KVP_VERSION_MAJOR << 16) | KVP_VERSION_MINOR)

#define KVP_EINVAL (-1)

/* Returns KVP_VERSION of the library that was loaded. */
KVP_API uint32_t kvp_version(void);

/* XXH3_64bits_withSeed over len bytes at data. data may be NULL only when len == 0. */
KVP_API uint64_t kvp_xxh3(const void *data, int64_t len, uint64_t seed);

/*
 * Hashes the full blocks of tokens[0 .. n_tokens) and, if chain_out is not NULL, their chain.
 *   tokens      n_tokens values (may be NULL when n_tokens == 0)
 *   block_size  >= 1
 *   seed        local-hash seed (1337, plus any LoRA / namespace salt, computed by the caller)
 *   chain_seed  chain seed (1337)
 *   local_out   room for n_tokens / block_size values
 *   chain_out   NULL, or room for n_tokens / block_size values; the chain starts a new sequence
 * Returns the number of blocks, n_tokens / block_size, or KVP_EINVAL.
 */
KVP_API int64_t kvp_hash_blocks(const uint32_t *tokens, int64_t n_tokens, int32_t block_size,
                                uint64_t seed, uint64_t chain_seed,
                                uint64_t *local_out, uint64_t *chain_out);

/*
 * As kvp_hash_blocks, with multimodal extras: the bytes of block b are its tokens followed by
 * mm_hashes[mm_offsets[b] .. mm_offsets[b+1]), each as 8 bytes little-endian. The caller sorts each
 * block's extras ascending (the contract's order) before the call.
 *   mm_offsets  n_tokens / block_size + 1 non-decreasing values, mm_offsets[0] >= 0
 *   mm_hashes   the extras of every block, block after block
 * Returns the number of blocks, or KVP_EINVAL (also when the offsets decrease).
 */
KVP_API int64_t kvp_hash_blocks_mm(const uint32_t *tokens, int64_t n_tokens, int32_t block_size,
                                   uint64_t seed, const int32_t *mm_offsets,
                                   const uint64_t *mm_hashes, uint64_t chain_seed,
                                   uint64_t *local_out, uint64_t *chain_out);

/*
 * Chain hashes of n local hashes. If has_parent is non-zero the first block continues the block
 * whose chain hash is parent: chain_out[0] = chain(parent, local[0]); otherwise chain_out[0] = local[0].
 * Returns n, or KVP_EINVAL.
 */
KVP_API int64_t kvp_chain(const uint64_t *local, int64_t n, uint64_t chain_seed,
                          int32_t has_parent, uint64_t parent, uint64_t *chain_out);

#ifdef __cplusplus
}
#endif

#endif /* KVPREFIX_H */
