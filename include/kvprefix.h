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
 * Hashing (kvprefix docs/SPEC.md section 2, bit-compatible with NVIDIA Dynamo's router):
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
#define KVP_VERSION_MAJOR 2
#define KVP_VERSION_MINOR 1
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
 * block's extras ascending (the order of docs/SPEC.md section 2.1) before the call.
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

/* ------------------------------------------------------------------------------------------------
 * Matching over the off-heap chain index that the Java index writes (Java: ChainLayout).
 *
 * A run is a stretch of consecutive blocks of one chain: a 56-byte header, then its blocks' local
 * hashes (u64 each). Block id = run << 6 | offset. Runs are found through the child table (open
 * addressing over mask + 1 records of 16 bytes: u64 local at +0, i32 parent block id + 1 at +8 (0:
 * the run starts a chain), i32 run id + 1 at +12 (0 empty, -1 being written, -2 removed)), whose
 * home record for (parent, local) is: h = local ^ (0x9E3779B97F4A7C15 * (parent + 2)); h ^= h >> 33;
 * h *= 0xFF51AFD7ED558CCD; h ^= h >> 33; home = (uint32_t)h & mask; then linear probing. A run's
 * record address is runs[run] (0 = none); run ids at or above run_capacity are not visible yet.
 *
 * Run header: +0 i32 length (blocks), +4 i32 entries (holder positions in use), +8 u64 address of
 * the first entry chunk, +16 and +24 the first two holder entries, locals from +56. Entry chunk: +0
 * u64 next chunk, +16 the entries (8, 16, 32, then 64 per chunk). Holder entry (u64): bits 0..31
 * worker slot + 1 (0 = vacant), bits 32..39 cutoff (the worker reaches blocks [0, cutoff) of the run).
 *
 * Memory ordering (C11 model, GCC __atomic builtins): Java writers publish a run's hashes before its
 * length, an entry before the entry count, a chunk's entries before its link, and a child record's
 * key before its run field, all with release semantics; the kernel loads those with acquire semantics.
 * Hashes below a published length never change. The caller keeps all of it alive for the whole call
 * (Java registers the calling thread as a reader and frees memory only after every such call has
 * returned).
 *
 * Search (docs/SPEC.md section 4, exact): from the run starting the chain, compare the request's
 * local hashes with the run's, credit every holder with min(cutoff, matched) blocks (a deeper run's
 * credit replaces a shallower one's), and continue in the run hanging from the last matched block
 * while some holder reaches it.
 *
 * Results: for every worker slot with depth > 0, its slot in out_slots[i] and depth in
 * out_depths[i]; index_scratch has one zero int per worker slot (left zero on return). out_slots and
 * out_depths need room for one entry per worker slot. Returns the number of entries, or KVP_EINVAL.
 * ---------------------------------------------------------------------------------------------- */
#define KVP_RUN_LENGTH 0
#define KVP_RUN_ENTRIES 4
#define KVP_RUN_CHUNKS 8
#define KVP_RUN_ENTRY0 16
#define KVP_RUN_LOCALS 56
#define KVP_CHUNK_NEXT 0
#define KVP_CHUNK_ENTRIES 16
#define KVP_CHILD_LOCAL 0
#define KVP_CHILD_PARENT 8
#define KVP_CHILD_RUN 12
#define KVP_CHILD_STRIDE 16

/* Matches n_blocks local hashes local[0 .. n_blocks). */
KVP_API int32_t kvp_match_hashes(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                                 const uint64_t *local, int32_t n_blocks, int32_t *index_scratch,
                                 int32_t *out_slots, int32_t *out_depths);

/*
 * Hash-and-match in one call: the full blocks of tokens[0 .. n_tokens) are hashed (seed, as
 * kvp_hash_blocks) only as far as the search needs them, into local_scratch (room for n_tokens /
 * block_size values); then matched as kvp_match_hashes. *n_hashed receives how many local hashes
 * were computed (a prefix of the blocks).
 */
KVP_API int32_t kvp_match_tokens(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                                 const uint32_t *tokens, int64_t n_tokens, int32_t block_size, uint64_t seed,
                                 uint64_t *local_scratch, int32_t *n_hashed, int32_t *index_scratch,
                                 int32_t *out_slots, int32_t *out_depths);

/*
 * (since 2.1) Hash-and-match in one call that also hands back every block's local hash: as
 * kvp_match_tokens, then the blocks the search did not need are hashed too, so local_out receives all
 * n_tokens / block_size local hashes, each computed once (the search's and the rest). For a caller
 * that needs the request's hashes after the match (the router's in-flight prefills, docs/SPEC.md
 * section 6.7) this is the whole hashing cost: no block is hashed twice.
 *   local_out  room for n_tokens / block_size values (may be NULL when there is no full block)
 * Returns the number of (slot, depth) entries, as kvp_match_hashes, or KVP_EINVAL.
 */
KVP_API int32_t kvp_match_tokens_all(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                                     const uint32_t *tokens, int64_t n_tokens, int32_t block_size, uint64_t seed,
                                     uint64_t *local_out, int32_t *index_scratch, int32_t *out_slots,
                                     int32_t *out_depths);

/* ================================================================================================
 * DIAGNOSTICS - for kvprefix's own tests, not for applications.
 *
 * kvp_layout and kvp_home let the Java tests check that this library and Java agree on the table
 * (TableLayout, NativeKernelTest). kvp_thread_calls counts kernel calls only in the test build
 * (CMake target kvprefix_test, compiled with KVP_COUNT_CALLS); the packaged library does not count
 * and answers KVP_NOT_COUNTED.
 * ============================================================================================== */

/* kvp_thread_calls() in a library built without the call counter. */
#define KVP_NOT_COUNTED UINT64_MAX

/* Writes the record offsets this library was built with (KVP_RUN_LENGTH, KVP_RUN_ENTRIES,
 * KVP_RUN_CHUNKS, KVP_RUN_ENTRY0, KVP_RUN_LOCALS, KVP_CHUNK_NEXT, KVP_CHUNK_ENTRIES, KVP_CHILD_LOCAL,
 * KVP_CHILD_PARENT, KVP_CHILD_RUN, KVP_CHILD_STRIDE) into out[0..11) and returns 11. */
KVP_API int32_t kvp_layout(int32_t *out);

/* The home record of (parent block, local) in a child table of mask + 1 records. */
KVP_API uint32_t kvp_child_home(int32_t parent_block, uint64_t local, uint32_t mask);

/* How many kvp_match_* and kvp_hash_* / kvp_chain calls the calling thread has made (test build),
 * or KVP_NOT_COUNTED (packaged library). */
KVP_API uint64_t kvp_thread_calls(void);

#ifdef __cplusplus
}
#endif

#endif /* KVPREFIX_H */
