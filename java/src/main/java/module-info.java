/**
 * kvprefix: a KV-cache-aware prefix index for Java LLM routers.
 *
 * <p>One package is exported, {@code io.kvprefix}; everything under {@code io.kvprefix.internal}
 * is an implementation detail. The native library is reached through the Foreign Function and
 * Memory API, so a JVM that uses it needs {@code --enable-native-access=io.kvprefix} (or
 * {@code ALL-UNNAMED} on the class path); without it kvprefix falls back to its pure-Java path.
 */
module io.kvprefix {
    requires zero.allocation.hashing;
    requires it.unimi.dsi.fastutil.core;

    exports io.kvprefix;
}
