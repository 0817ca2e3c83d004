package io.kvprefix.cli;

import io.kvprefix.BlockHasher;
import io.kvprefix.Implementation;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix hash}: prints the local and chain hash of every full block of a token list, one
 * line per block: {@code index local chain}, unsigned decimals.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "hash",
        mixinStandardHelpOptions = true,
        description = {
            "Hash tokens into KV blocks exactly as Dynamo's router does (XXH3, docs/SPEC.md section 2).",
            "Prints one line per full block: index local_hash chain_hash (unsigned decimals)."
        })
final class HashCommand implements Callable<Integer> {
    @Option(names = "--block-size", required = true, paramLabel = "N", description = "tokens per block (>= 1)")
    int blockSize;

    @Option(
            names = "--tokens",
            required = true,
            paramLabel = "LIST",
            description = "comma-separated token ids, unsigned 32-bit (0..4294967295); '' for none")
    String tokens;

    @Option(
            names = "--seed",
            paramLabel = "N",
            description = "base local-hash seed, replaces 1337 before any salt is added (unsigned or negative 64-bit)")
    String seed;

    @Option(names = "--chain-seed", paramLabel = "N", description = "chain seed (default 1337)")
    String chainSeed;

    @Option(names = "--lora", paramLabel = "NAME", description = "LoRA adapter name (salts the seed)")
    String lora;

    @Option(names = "--namespace", paramLabel = "NAME", description = "cache namespace (salts the seed)")
    String namespace;

    @Option(
            names = "--mm",
            paramLabel = "START:END:MM_HASH[,...]",
            description = {
                "multimodal items: token offsets [START, END) of one item and its content hash (unsigned or negative",
                "64-bit); every block whose tokens overlap the span carries the hash (docs/SPEC.md section 2.1)"
            })
    String mm;

    @Option(
            names = "--impl",
            paramLabel = "native|portable|auto",
            description = "hashing implementation (default: auto)")
    String impl;

    @Override
    public Integer call() {
        if (blockSize < 1) {
            throw new IllegalArgumentException("--block-size must be >= 1, got " + blockSize);
        }
        int[] toks = Check.parseTokens(tokens, "--tokens");
        BlockHasher.Builder b =
                BlockHasher.builder().blockSize(blockSize).loraName(lora).cacheNamespace(namespace);
        if (seed != null) {
            b.seed(Check.parseU64(seed, "--seed"));
        }
        if (chainSeed != null) {
            b.chainSeed(Check.parseU64(chainSeed, "--chain-seed"));
        }
        b.implementation(impl == null ? Implementation.fromEnvironment() : Implementation.parse(impl));
        BlockHasher h = b.build();
        int n = h.blockCount(toks.length);
        long[] local = new long[n];
        long[] chain = new long[n];
        long[][] extras = h.multimodalExtras(toks.length, parseSpans(mm));
        if (extras == null) {
            h.hashBlocks(toks, 0, toks.length, local, chain);
        } else {
            h.hashBlocks(toks, 0, toks.length, extras, local, chain);
        }
        PrintStream out = System.out;
        StringBuilder sb = new StringBuilder(n * 48);
        for (int i = 0; i < n; i++) {
            sb.append(i)
                    .append(' ')
                    .append(Long.toUnsignedString(local[i]))
                    .append(' ')
                    .append(Long.toUnsignedString(chain[i]))
                    .append('\n');
        }
        out.print(sb);
        out.flush();
        return 0;
    }

    /** {@code START:END:MM_HASH[,...]}; null or empty for none. */
    static List<BlockHasher.MmSpan> parseSpans(String s) {
        List<BlockHasher.MmSpan> out = new ArrayList<>();
        if (s == null || s.isEmpty()) {
            return out;
        }
        for (String item : s.split(",", -1)) {
            String[] p = item.split(":", -1);
            if (p.length != 3) {
                throw new IllegalArgumentException("--mm: '" + item + "' is not START:END:MM_HASH");
            }
            int start = (int) Check.parseLong(p[0], "--mm START", 0, Integer.MAX_VALUE);
            int end = (int) Check.parseLong(p[1], "--mm END", 0, Integer.MAX_VALUE);
            if (start >= end) {
                throw new IllegalArgumentException("--mm: START " + start + " must be below END " + end);
            }
            out.add(new BlockHasher.MmSpan(start, end, Check.parseU64(p[2], "--mm MM_HASH")));
        }
        return out;
    }
}
