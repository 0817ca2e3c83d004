/*
 * kvp_match.c - the match kernel over the off-heap chain index Java writes (layout and memory
 * ordering in include/kvprefix.h), and hash-and-match in one call.
 */
#define KVP_BUILDING_LIBRARY 1
#include "kvprefix.h"
#include "kvp_internal.h" /* XXH3, inlined */

#include <stddef.h>
#include <string.h>

#define INLINE_ENTRIES 2
#define OFFSET_BITS 6

static inline uint32_t child_home(int32_t parent, uint64_t local, uint32_t mask) {
    uint64_t h = local ^ (0x9E3779B97F4A7C15ULL * (uint64_t)((int64_t)parent + 2));
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return (uint32_t)h & mask;
}

uint32_t kvp_child_home(int32_t parent_block, uint64_t local, uint32_t mask) {
    return child_home(parent_block, local, mask);
}

int32_t kvp_layout(int32_t *out) {
    if (out == NULL) return KVP_EINVAL;
    const int32_t v[11] = {KVP_RUN_LENGTH,  KVP_RUN_ENTRIES,  KVP_RUN_CHUNKS,    KVP_RUN_ENTRY0,
                           KVP_RUN_LOCALS,  KVP_CHUNK_NEXT,   KVP_CHUNK_ENTRIES, KVP_CHILD_LOCAL,
                           KVP_CHILD_PARENT, KVP_CHILD_RUN,   KVP_CHILD_STRIDE};
    memcpy(out, v, sizeof v);
    return 11;
}

static inline int32_t load_i32(const uint8_t *p) { return __atomic_load_n((const int32_t *)p, __ATOMIC_ACQUIRE); }
static inline uint64_t load_u64(const uint8_t *p) { return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE); }
static inline uint64_t plain_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline int32_t chunk_capacity(int32_t k) { return k == 0 ? 8 : k == 1 ? 16 : k == 2 ? 32 : 64; }

/* The run continuing `parent` (-1: a chain's start) whose block 0 has local hash `local`, or -1. */
static int32_t find_child(const uint8_t *children, uint32_t mask, int32_t parent, uint64_t local) {
    const int32_t p = parent + 1;
    uint32_t i = child_home(parent, local, mask);
    for (uint32_t n = 0; n <= mask; n++) {
        const uint8_t *r = children + (size_t)i * KVP_CHILD_STRIDE;
        const int32_t run = load_i32(r + KVP_CHILD_RUN);
        if (run == 0) return -1;
        if (run > 0 && plain_u64(r + KVP_CHILD_LOCAL) == local) {
            int32_t rp;
            memcpy(&rp, r + KVP_CHILD_PARENT, sizeof rp);
            if (rp == p) return run - 1;
        }
        i = (i + 1) & mask;
    }
    return -1;
}

/* Where the request's hashes come from: given local hashes, or tokens hashed on demand. */
typedef struct {
    uint64_t *local;        /* local hashes; for tokens, filled up to n_local */
    int32_t n_local;        /* local[0 .. n_local) are valid */
    const uint32_t *tokens; /* NULL when local hashes were given */
    int32_t block_size;
    uint64_t seed;
} req_t;

static inline uint64_t local_at(req_t *r, int32_t p) {
    while (r->n_local <= p) {
        const int32_t b = r->n_local;
        r->local[b] = kvp_block_hash(r->tokens + (size_t)b * (size_t)r->block_size, r->block_size, r->seed);
        r->n_local = b + 1;
    }
    return r->local[p];
}

static inline int32_t credit(uint64_t e, int32_t pos, int32_t m, int32_t count, int32_t *index,
                             int32_t *out_slots, int32_t *out_depths) {
    const int32_t slot = (int32_t)(uint32_t)e - 1;
    const int32_t cutoff = (int32_t)((e >> 32) & 0xFF);
    if (slot < 0 || cutoff == 0) return count;
    const int32_t depth = pos + (cutoff < m ? cutoff : m);
    const int32_t at = index[slot];
    if (at == 0) {
        out_slots[count] = slot;
        out_depths[count] = depth;
        index[slot] = ++count;
    } else {
        out_depths[at - 1] = depth;
    }
    return count;
}

static int32_t search(const uint8_t *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                      req_t *r, int32_t n, int32_t *index, int32_t *out_slots, int32_t *out_depths) {
    int32_t count = 0;
    if (n <= 0) return 0;
    int32_t run = find_child(children, mask, -1, local_at(r, 0));
    int32_t pos = 0;
    while (run >= 0 && run < run_capacity) {
        const uint8_t *a = (const uint8_t *)(uintptr_t)__atomic_load_n(&runs[run], __ATOMIC_ACQUIRE);
        if (a == NULL) break;
        const int32_t length = load_i32(a + KVP_RUN_LENGTH);
        int32_t m = 1;
        while (m < length && pos + m < n && plain_u64(a + KVP_RUN_LOCALS + 8 * (size_t)m) == local_at(r, pos + m)) m++;
        int onward = 0;
        const int32_t entries = load_i32(a + KVP_RUN_ENTRIES);
        int32_t p = 0;
        for (; p < entries && p < INLINE_ENTRIES; p++) {
            const uint64_t e = load_u64(a + KVP_RUN_ENTRY0 + 8 * (size_t)p);
            count = credit(e, pos, m, count, index, out_slots, out_depths);
            onward |= (uint32_t)e != 0 && (int32_t)((e >> 32) & 0xFF) >= m;
        }
        const uint8_t *chunk = (const uint8_t *)(uintptr_t)load_u64(a + KVP_RUN_CHUNKS);
        for (int32_t k = 0; p < entries; k++) {
            const int32_t cap = chunk_capacity(k);
            for (int32_t q = 0; q < cap && p < entries; q++, p++) {
                const uint64_t e = load_u64(chunk + KVP_CHUNK_ENTRIES + 8 * (size_t)q);
                count = credit(e, pos, m, count, index, out_slots, out_depths);
                onward |= (uint32_t)e != 0 && (int32_t)((e >> 32) & 0xFF) >= m;
            }
            chunk = (const uint8_t *)(uintptr_t)load_u64(chunk + KVP_CHUNK_NEXT);
        }
        if (!onward || pos + m == n) break;
        run = find_child(children, mask, run << OFFSET_BITS | (m - 1), local_at(r, pos + m));
        pos += m;
    }
    for (int32_t i = 0; i < count; i++) index[out_slots[i]] = 0;
    return count;
}

static int bad_table(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity) {
    return children == NULL || runs == NULL || run_capacity < 1 || ((mask + 1) & mask) != 0;
}

int32_t kvp_match_hashes(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                         const uint64_t *local, int32_t n_blocks, int32_t *index_scratch,
                         int32_t *out_slots, int32_t *out_depths) {
    KVP_COUNT_CALL();
    if (bad_table(children, mask, runs, run_capacity) || n_blocks < 0 || (n_blocks > 0 && local == NULL)
        || index_scratch == NULL || out_slots == NULL || out_depths == NULL) {
        return KVP_EINVAL;
    }
    req_t r = {(uint64_t *)local, n_blocks, NULL, 0, 0};
    return search((const uint8_t *)children, mask, runs, run_capacity, &r, n_blocks, index_scratch, out_slots,
                  out_depths);
}

int32_t kvp_match_tokens(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                         const uint32_t *tokens, int64_t n_tokens, int32_t block_size, uint64_t seed,
                         uint64_t *local_scratch, int32_t *n_hashed, int32_t *index_scratch,
                         int32_t *out_slots, int32_t *out_depths) {
    KVP_COUNT_CALL();
    if (bad_table(children, mask, runs, run_capacity) || block_size < 1 || n_tokens < 0 || n_hashed == NULL
        || index_scratch == NULL || out_slots == NULL || out_depths == NULL) {
        return KVP_EINVAL;
    }
    const int64_t blocks = n_tokens / block_size;
    if (blocks > INT32_MAX) return KVP_EINVAL;
    if (blocks > 0 && (tokens == NULL || local_scratch == NULL)) return KVP_EINVAL;
    req_t r = {local_scratch, 0, tokens, block_size, seed};
    const int32_t count = search((const uint8_t *)children, mask, runs, run_capacity, &r, (int32_t)blocks,
                                 index_scratch, out_slots, out_depths);
    *n_hashed = r.n_local;
    return count;
}

int32_t kvp_match_tokens_all(const void *children, uint32_t mask, const uint64_t *runs, int32_t run_capacity,
                             const uint32_t *tokens, int64_t n_tokens, int32_t block_size, uint64_t seed,
                             uint64_t *local_out, int32_t *index_scratch, int32_t *out_slots,
                             int32_t *out_depths) {
    KVP_COUNT_CALL();
    if (bad_table(children, mask, runs, run_capacity) || block_size < 1 || n_tokens < 0 || index_scratch == NULL
        || out_slots == NULL || out_depths == NULL) {
        return KVP_EINVAL;
    }
    const int64_t blocks = n_tokens / block_size;
    if (blocks > INT32_MAX) return KVP_EINVAL;
    if (blocks > 0 && (tokens == NULL || local_out == NULL)) return KVP_EINVAL;
    req_t r = {local_out, 0, tokens, block_size, seed};
    const int32_t count = search((const uint8_t *)children, mask, runs, run_capacity, &r, (int32_t)blocks,
                                 index_scratch, out_slots, out_depths);
    /* the rest of the blocks, each hashed once: the search stopped where no holder reached on */
    for (int32_t b = r.n_local; b < (int32_t)blocks; b++) {
        local_out[b] = kvp_block_hash(tokens + (size_t)b * (size_t)block_size, block_size, seed);
    }
    return count;
}
