/**
 * Block hashing kernels behind {@code BlockHasher} (docs/SPEC.md section 2), in the shape of Lucene's
 * vectorization provider: one interface ({@link io.kvprefix.internal.hash.HashKernel}), a portable
 * implementation on zero-allocation-hashing's XXH3 and a native one in libkvprefix (one downcall per
 * call), chosen once when a hasher is built; both give identical output. The salted hashers an
 * index needs for token-form events and requests are built once and cached
 * ({@link io.kvprefix.internal.hash.SaltedHashers}).
 */
package io.kvprefix.internal.hash;
