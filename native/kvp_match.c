/*
 * kvp_match.c - the match kernel over the off-heap positional table Java writes (layout and
 * memory ordering in include/kvprefix.h), and hash-and-match in one call.
 */
#define KVP_BUILDING_LIBRARY 1
#include "kvprefix.h"
#include "kvp_internal.h" /* XXH3, inlined */

#include <stddef.h>
#include <string.h>

#define STATE_EMPTY 0
#define PREFETCH_AHEAD 8 /* jump targets prefetched ahead of the search */

static inline uint32_t home_slot(int32_t pos, uint64_t local, uint32_t mask) {
    uint64_t h = local ^ (0x9E3779B97F4A7C15ULL * (uint64_t)((int64_t)pos + 1));
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return (uint32_t)h & mask;
}

uint32_t kvp_home(int32_t position, uint64_t local, uint32_t mask) { return home_slot(position, local, mask); }

int32_t kvp_layout(int32_t *out) {
    if (out == NULL) return KVP_EINVAL;
    out[0] = KVP_HOT_LOCAL;
    out[1] = KVP_HOT_CHAIN;
    out[2] = KVP_HOT_STATE;
    out[3] = KVP_HOT_PARENT;
    out[4] = KVP_HOT_BITS;
    return 5;
}

static inline int32_t load_state(const uint8_t *rec) {
    return __atomic_load_n((const int32_t *)(rec + KVP_HOT_STATE), __ATOMIC_ACQUIRE);
}

static inline uint64_t load_bits(const uint8_t *rec, int32_t w) {
    return __atomic_load_n((const uint64_t *)(rec + KVP_HOT_BITS) + w, __ATOMIC_ACQUIRE);
}

static inline uint64_t rec_u64(const uint8_t *rec, size_t off) {
    uint64_t v;
    memcpy(&v, rec + off, sizeof v);
    return v;
}

/* Where the request's hashes come from: given local hashes, or tokens hashed on demand. */
typedef struct {
    const uint8_t *hot;
    uint32_t mask;
    int32_t words;
    size_t stride;
    uint64_t chain_seed;
    uint64_t *local;          /* local hashes; for tokens, filled up to n_local */
    int32_t n_local;          /* local[0 .. n_local) are valid */
    const uint32_t *tokens;   /* NULL when local hashes were given */
    int32_t block_size;
    uint64_t seed;
    uint64_t *chain;          /* chain[0 .. n_chain) are valid */
    int32_t n_chain;
} req_t;

static inline uint64_t local_at(req_t *r, int32_t p) {
    while (r->n_local <= p) {
        const int32_t b = r->n_local;
        r->local[b] = kvp_block_hash(r->tokens + (size_t)b * (size_t)r->block_size, r->block_size, r->seed);
        r->n_local = b + 1;
    }
    return r->local[p];
}

static inline uint64_t chain_at(req_t *r, int32_t p) {
    while (r->n_chain <= p) {
        const int32_t i = r->n_chain;
        const uint64_t l = r->tokens ? local_at(r, i) : r->local[i];
        r->chain[i] = i == 0 ? l : kvp_chain_step(r->chain[i - 1], l, r->chain_seed);
        r->n_chain = i + 1;
    }
    return r->chain[p];
}

/* The record of (p, local[p], chain[p]), or NULL; chain hashes are computed only if the key exists. */
static inline const uint8_t *probe(req_t *r, int32_t p) {
    const uint64_t local = r->tokens ? local_at(r, p) : r->local[p];
    const int32_t want = p + 1;
    uint32_t i = home_slot(p, local, r->mask);
    for (uint32_t n = 0; n <= r->mask; n++) {
        const uint8_t *rec = r->hot + (size_t)i * r->stride;
        const int32_t st = load_state(rec);
        if (st == STATE_EMPTY) return NULL;
        if (st == want && rec_u64(rec, KVP_HOT_LOCAL) == local) {
            if (rec_u64(rec, KVP_HOT_CHAIN) == chain_at(r, p)) return rec;
        }
        i = (i + 1) & r->mask;
    }
    return NULL;
}

static inline int32_t emit(uint64_t bits, int32_t word, int32_t depth, int32_t count,
                           int32_t *out_slots, int32_t *out_depths) {
    while (bits) {
        const int b = __builtin_ctzll(bits);
        bits &= bits - 1;
        out_slots[count] = word * 64 + b;
        out_depths[count] = depth;
        count++;
    }
    return count;
}

/* The jump search. The bitset loops over `words` are plain loops the compiler vectorises; the
 * function is cloned for AVX-512, AVX2 and baseline x86-64 and picked at load time. */
#if defined(__x86_64__) && !defined(KVP_NO_CLONES)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static int32_t search(req_t *r, int32_t n, int32_t jump, int32_t *out_slots, int32_t *out_depths) {
    const int32_t words = r->words;
    uint64_t active[KVP_MAX_WORDS];
    int32_t count = 0;
    if (n <= 0) return 0;
    /* Prefetch the home slots of the next PREFETCH_AHEAD jump targets, a sliding window: their cache
     * misses overlap. Only when the local hashes are given; with tokens they would have to be hashed
     * first, which a divergent request never needs. */
    int32_t touched = 0;
    const int prefetch = r->tokens == NULL;
    if (prefetch) {
        for (int32_t p = jump; p < n && p <= PREFETCH_AHEAD * jump; p += jump) {
            const int32_t t = p < n - 1 ? p : n - 1;
            __builtin_prefetch(r->hot + (size_t)home_slot(t, r->local[t], r->mask) * r->stride);
            touched = p;
        }
    }
    const uint8_t *e0 = probe(r, 0);
    if (e0 == NULL) return 0;
    uint64_t any = 0;
    for (int32_t w = 0; w < words; w++) {
        active[w] = load_bits(e0, w);
        any |= active[w];
    }
    int32_t cur = 0;
    while (any && cur < n - 1) {
        const int32_t nxt = cur + jump < n - 1 ? cur + jump : n - 1;
        if (prefetch && touched < n - 1) {
            touched += jump;
            const int32_t t = touched < n - 1 ? touched : n - 1;
            __builtin_prefetch(r->hot + (size_t)home_slot(t, r->local[t], r->mask) * r->stride);
        }
        const uint8_t *t = probe(r, nxt);
        if (t != NULL) {
            uint64_t missing = 0;
            for (int32_t w = 0; w < words; w++) missing |= active[w] & ~load_bits(t, w);
            if (!missing) {
                cur = nxt;
                continue;
            }
        }
        for (int32_t p = cur + 1; p <= nxt && any; p++) {
            const uint8_t *e = probe(r, p);
            any = 0;
            for (int32_t w = 0; w < words; w++) {
                const uint64_t held = e ? load_bits(e, w) : 0;
                count = emit(active[w] & ~held, w, p, count, out_slots, out_depths);
                active[w] &= held;
                any |= active[w];
            }
        }
        cur = nxt;
    }
    for (int32_t w = 0; w < words; w++) count = emit(active[w], w, n, count, out_slots, out_depths);
    return count;
}

int32_t kvp_match_hashes(const void *hot, uint32_t mask, int32_t words, int32_t jump,
                         uint64_t chain_seed, const uint64_t *local, int32_t n_blocks,
                         uint64_t *chain_scratch, int32_t *out_slots, int32_t *out_depths) {
    KVP_COUNT_CALL();
    if (hot == NULL || words < 1 || words > KVP_MAX_WORDS || jump < 1 || n_blocks < 0
        || (n_blocks > 0 && (local == NULL || chain_scratch == NULL)) || out_slots == NULL || out_depths == NULL
        || ((mask + 1) & mask) != 0) {
        return KVP_EINVAL;
    }
    req_t r = {(const uint8_t *)hot, mask, words, (size_t)KVP_HOT_BITS + 8u * (size_t)words, chain_seed,
               (uint64_t *)local, n_blocks, NULL, 0, 0, chain_scratch, 0};
    return search(&r, n_blocks, jump, out_slots, out_depths);
}

int32_t kvp_match_tokens(const void *hot, uint32_t mask, int32_t words, int32_t jump,
                         const uint32_t *tokens, int64_t n_tokens, int32_t block_size,
                         uint64_t seed, uint64_t chain_seed, uint64_t *local_scratch,
                         uint64_t *chain_scratch, int32_t *n_hashed,
                         int32_t *out_slots, int32_t *out_depths) {
    KVP_COUNT_CALL();
    if (hot == NULL || words < 1 || words > KVP_MAX_WORDS || jump < 1 || block_size < 1 || n_tokens < 0
        || out_slots == NULL || out_depths == NULL || n_hashed == NULL || ((mask + 1) & mask) != 0) {
        return KVP_EINVAL;
    }
    const int64_t blocks = n_tokens / block_size;
    if (blocks > INT32_MAX) return KVP_EINVAL;
    if (blocks > 0 && (tokens == NULL || local_scratch == NULL || chain_scratch == NULL)) return KVP_EINVAL;
    req_t r = {(const uint8_t *)hot, mask, words, (size_t)KVP_HOT_BITS + 8u * (size_t)words, chain_seed,
               local_scratch, 0, tokens, block_size, seed, chain_scratch, 0};
    const int32_t count = search(&r, (int32_t)blocks, jump, out_slots, out_depths);
    *n_hashed = r.n_local;
    return count;
}
