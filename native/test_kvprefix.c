/*
 * test_kvprefix.c - C tests of libkvprefix (run by ctest, which the Maven build runs in its test
 * phase) and, with --bench, the "C ceiling" of the hashing benchmark: a plain loop over
 * XXH3_64bits_withSeed, the fastest any binding could hash blocks.
 */
#include "kvprefix.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define CHECK_EQ_U64(what, got, want)                                                          \
    do {                                                                                       \
        uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                                  \
        if (g_ != w_) {                                                                        \
            fprintf(stderr, "FAIL %s: got %" PRIu64 ", want %" PRIu64 "\n", what, g_, w_);     \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static uint64_t mooncake_local(uint32_t id) {
    uint32_t block[512];
    for (int i = 0; i < 512; i++) block[i] = id;
    uint64_t out;
    kvp_hash_blocks(block, 512, 512, 1337, 1337, &out, NULL);
    return out;
}

static void test_vectors(void) {
    CHECK_EQ_U64("xxh3(test data)", kvp_xxh3("test data", 9, 1337), 13226331709069118873ULL);
    CHECK_EQ_U64("xxh3(empty)", kvp_xxh3(NULL, 0, 1337), 15128690059815094969ULL);

    uint32_t t[13];
    for (uint32_t i = 0; i < 13; i++) t[i] = i + 1;
    uint64_t local[3], chain[3];
    CHECK_EQ_U64("blocks of 13 tokens", kvp_hash_blocks(t, 13, 4, 1337, 1337, local, chain), 3);
    CHECK_EQ_U64("L[1,2,3,4]", local[0], 14643705804678351452ULL);
    CHECK_EQ_U64("L[5,6,7,8]", local[1], 16777012769546811212ULL);
    CHECK_EQ_U64("L[9,10,11,12]", local[2], 483935686894639516ULL);
    CHECK_EQ_U64("C0", chain[0], 14643705804678351452ULL);
    CHECK_EQ_U64("C1", chain[1], 4945711292740353085ULL);
    CHECK_EQ_U64("C2", chain[2], 12583592247330656132ULL);

    uint64_t chain2[3];
    CHECK_EQ_U64("kvp_chain n", kvp_chain(local, 3, 1337, 0, 0, chain2), 3);
    for (int i = 0; i < 3; i++) CHECK_EQ_U64("kvp_chain == hash_blocks chain", chain2[i], chain[i]);
    /* continuing a parent: chain(C0, L1) == C1 */
    uint64_t cont;
    kvp_chain(&local[1], 1, 1337, 1, chain[0], &cont);
    CHECK_EQ_U64("chain with parent", cont, chain[1]);

    uint64_t l3[3] = {11, 22, 33}, c3[3];
    kvp_chain(l3, 3, 1337, 0, 0, c3);
    CHECK_EQ_U64("chain[11]", c3[0], 11);
    CHECK_EQ_U64("chain[11,22]", c3[1], 750553365844651409ULL);
    CHECK_EQ_U64("chain[11,22,33]", c3[2], 3257565445809651757ULL);

    CHECK_EQ_U64("mooncake L(0)", mooncake_local(0), 16456450638077811066ULL);
    CHECK_EQ_U64("mooncake L(1)", mooncake_local(1), 10716031498429279048ULL);
    CHECK_EQ_U64("mooncake L(2)", mooncake_local(2), 17161484913955091167ULL);
    CHECK_EQ_U64("mooncake L(42)", mooncake_local(42), 11733219580547862099ULL);
    uint64_t ml[3] = {mooncake_local(0), mooncake_local(1), mooncake_local(2)}, mc[3];
    kvp_chain(ml, 3, 1337, 0, 0, mc);
    CHECK_EQ_U64("mooncake chain 1", mc[1], 10107136320548696770ULL);
    CHECK_EQ_U64("mooncake chain 2", mc[2], 13351200824785277189ULL);

    /* salts: seed = 1337 + xxh3(lora, 0) + xxh3(namespace, 1) */
    uint32_t b0[4] = {0, 1, 2, 3};
    uint64_t seed_lora = 1337 + kvp_xxh3("adapter-a", 9, 0);
    uint64_t seed_ns = 1337 + kvp_xxh3("tenant-a", 8, 1);
    uint64_t seed_both = 1337 + kvp_xxh3("adapter-a", 9, 0) + kvp_xxh3("tenant-a", 8, 1);
    CHECK_EQ_U64("lora seed", seed_lora, 8842669519798868182ULL);
    CHECK_EQ_U64("namespace seed", seed_ns, 1948188790972764086ULL);
    CHECK_EQ_U64("both seed", seed_both, 10790858310771630931ULL);
    uint64_t l;
    kvp_hash_blocks(b0, 4, 4, 1337, 1337, &l, NULL);
    CHECK_EQ_U64("L[0,1,2,3]", l, 9143094415614847814ULL);
    kvp_hash_blocks(b0, 4, 4, seed_lora, 1337, &l, NULL);
    CHECK_EQ_U64("L[0,1,2,3] lora", l, 6665157333201000639ULL);
    kvp_hash_blocks(b0, 4, 4, seed_ns, 1337, &l, NULL);
    CHECK_EQ_U64("L[0,1,2,3] namespace", l, 17009624042690211646ULL);
    kvp_hash_blocks(b0, 4, 4, seed_both, 1337, &l, NULL);
    CHECK_EQ_U64("L[0,1,2,3] both", l, 8269515957840517240ULL);

    /* multimodal: block [0,1] with one extra hash 42 */
    uint32_t b1[2] = {0, 1};
    int32_t offs[2] = {0, 1};
    uint64_t mm[1] = {42};
    CHECK_EQ_U64("mm blocks", kvp_hash_blocks_mm(b1, 2, 2, 1337, offs, mm, 1337, &l, NULL), 1);
    CHECK_EQ_U64("L mm", l, 6100948656312251355ULL);
    int32_t none[2] = {0, 0};
    kvp_hash_blocks_mm(b1, 2, 2, 1337, none, NULL, 1337, &l, NULL);
    CHECK_EQ_U64("L mm none", l, 10918435022357402928ULL);
}

static void test_edges(void) {
    uint64_t out[4] = {7, 7, 7, 7};
    uint32_t t[3] = {1, 2, 3};
    CHECK_EQ_U64("empty input", kvp_hash_blocks(NULL, 0, 4, 1337, 1337, NULL, NULL), 0);
    CHECK_EQ_U64("partial block only", kvp_hash_blocks(t, 3, 4, 1337, 1337, out, out), 0);
    CHECK_EQ_U64("untouched", out[0], 7);
    CHECK_EQ_U64("block_size 0", (uint64_t)kvp_hash_blocks(t, 3, 0, 1337, 1337, out, NULL), (uint64_t)KVP_EINVAL);
    CHECK_EQ_U64("negative n", (uint64_t)kvp_hash_blocks(t, -1, 1, 1337, 1337, out, NULL), (uint64_t)KVP_EINVAL);
    CHECK_EQ_U64("null out", (uint64_t)kvp_hash_blocks(t, 3, 1, 1337, 1337, NULL, NULL), (uint64_t)KVP_EINVAL);
    int32_t bad[3] = {0, 2, 1};
    uint64_t mm[2] = {1, 2};
    CHECK_EQ_U64("decreasing offsets", (uint64_t)kvp_hash_blocks_mm(t, 2, 1, 1337, bad, mm, 1337, out, NULL), (uint64_t)KVP_EINVAL);
    CHECK_EQ_U64("block_size 1", kvp_hash_blocks(t, 3, 1, 1337, 1337, out, NULL), 3);
    CHECK_EQ_U64("version", kvp_version(), KVP_VERSION);
}

/* kvp_match_tokens_all over an empty table: the search needs block 0 only, every block is still handed back. */
static void test_match_tokens_all(void) {
    uint8_t children[KVP_CHILD_STRIDE] = {0}; /* one empty child record, mask 0 */
    uint64_t runs[1] = {0};
    uint32_t t[13];
    for (int i = 0; i < 13; i++) t[i] = (uint32_t)(i * 7 + 1);
    uint64_t want[3], got[3] = {0, 0, 0};
    int32_t index[1] = {0}, slots[1], depths[1], hashed = -1;
    kvp_hash_blocks(t, 13, 4, 1337, 1337, want, NULL);
    CHECK_EQ_U64("all: no match", kvp_match_tokens_all(children, 0, runs, 1, t, 13, 4, 1337, got, index, slots, depths), 0);
    for (int b = 0; b < 3; b++) CHECK_EQ_U64("all: every block hashed", got[b], want[b]);
    uint64_t lazy[3] = {0, 0, 0};
    kvp_match_tokens(children, 0, runs, 1, t, 13, 4, 1337, lazy, &hashed, index, slots, depths);
    CHECK_EQ_U64("lazy: one block hashed", hashed, 1);
    CHECK_EQ_U64("all: no full block", kvp_match_tokens_all(children, 0, runs, 1, t, 3, 4, 1337, NULL, index, slots, depths), 0);
    CHECK_EQ_U64("all: block_size 0", (uint64_t)kvp_match_tokens_all(children, 0, runs, 1, t, 13, 0, 1337, got, index, slots, depths), (uint64_t)KVP_EINVAL);
    CHECK_EQ_U64("all: null out", (uint64_t)kvp_match_tokens_all(children, 0, runs, 1, t, 13, 4, 1337, NULL, index, slots, depths), (uint64_t)KVP_EINVAL);
}

/* The test build counts every kernel call of the calling thread (the packaged library does not). */
static void test_call_counter(void) {
    uint32_t t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint64_t out[2];
    const uint64_t before = kvp_thread_calls();
    CHECK_EQ_U64("counting build", before == KVP_NOT_COUNTED, 0);
    kvp_hash_blocks(t, 8, 4, 1337, 1337, out, NULL);
    kvp_chain(out, 2, 1337, 0, 0, out);
    CHECK_EQ_U64("two calls counted", kvp_thread_calls() - before, 2);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The hashing ceiling: XXH3 over each block of a request, in a plain loop, no call boundary. */
static void bench(void) {
    const int sizes[] = {16, 64, 512};
    const int counts[] = {1, 32, 512};
    uint32_t *tokens = malloc(sizeof(uint32_t) * 512 * 512);
    uint64_t *out = malloc(sizeof(uint64_t) * 512);
    for (int i = 0; i < 512 * 512; i++) tokens[i] = (uint32_t)(i * 2654435761u);
    volatile uint64_t sink = 0;
    printf("# C ceiling: XXH3_64bits_withSeed per block, plain loop (ns per block, best of 7 runs)\n");
    for (int si = 0; si < 3; si++) {
        for (int ci = 0; ci < 3; ci++) {
            const int bs = sizes[si], n = counts[ci];
            const size_t bytes = (size_t)bs * 4;
            long reps = (long)(20000000.0 / ((double)bs * n)) + 1;
            double best = 1e30;
            for (int run = 0; run < 7; run++) {
                double t0 = now_ns();
                for (long r = 0; r < reps; r++) {
                    tokens[0] = (uint32_t)r;
                    for (int b = 0; b < n; b++) out[b] = XXH3_64bits_withSeed(tokens + (size_t)b * bs, bytes, 1337);
                    sink += out[n - 1];
                }
                double per = (now_ns() - t0) / ((double)reps * n);
                if (per < best) best = per;
            }
            printf("ceiling block_size=%d blocks=%d ns_per_block=%.2f\n", bs, n, best);
        }
    }
    free(tokens);
    free(out);
    (void)sink;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    test_vectors();
    test_edges();
    test_match_tokens_all();
    test_call_counter();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("libkvprefix C tests: all checks passed\n");
    return 0;
}
