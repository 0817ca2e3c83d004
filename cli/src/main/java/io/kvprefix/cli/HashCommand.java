package io.kvprefix.cli;

import io.kvprefix.BlockHasher;
import io.kvprefix.Implementation;
import java.io.PrintStream;
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
            names = "--impl",
            paramLabel = "native|portable|auto",
            description = "hashing implementation (default: auto)")
    String impl;

    @Override
    public Integer call() {
        if (blockSize < 1) {
            throw new IllegalArgumentException("--block-size must be >= 1, got " + blockSize);
        }
        int[] toks = Args.parseTokens(tokens, "--tokens");
        BlockHasher.Builder b =
                BlockHasher.builder().blockSize(blockSize).loraName(lora).cacheNamespace(namespace);
        if (seed != null) {
            b.seed(Args.parseU64(seed, "--seed"));
        }
        if (chainSeed != null) {
            b.chainSeed(Args.parseU64(chainSeed, "--chain-seed"));
        }
        b.implementation(impl == null ? Implementation.fromEnvironment() : Implementation.parse(impl));
        BlockHasher h = b.build();
        int n = h.blockCount(toks.length);
        long[] local = new long[n];
        long[] chain = new long[n];
        h.hashBlocks(toks, 0, toks.length, local, chain);
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
}
