/**
 * Everything kvprefix does through the Foreign Function and Memory API's restricted methods, and
 * nowhere else (./kvprefix test runs {@code jnativescan} and fails otherwise).
 *
 * <ul>
 *   <li>{@link io.kvprefix.internal.ffi.NativeLibrary} finds and loads {@code libkvprefix.so} once per
 *       JVM (an explicit path, or the copy packaged in the jar under {@code native/<os>-<arch>/}) and
 *       checks its API version.
 *   <li>{@link io.kvprefix.internal.ffi.KvpBindings} binds every function of {@code include/kvprefix.h}
 *       by hand (jextract is not available), each a {@code static final} method handle called with
 *       {@code invokeExact}; short kernels use {@code Linker.Option.critical(true)} so heap arrays are
 *       passed without copies. A test parses the header and checks every function is bound with its shape.
 *   <li>{@link io.kvprefix.internal.ffi.Libc} binds {@code calloc}, {@code free} and {@code madvise}
 *       for the off-heap index's memory, and is the one place a raw address becomes a segment.
 * </ul>
 *
 * <p>Java checks every precondition before a call; the C side checks again cheaply and answers
 * {@code KVP_EINVAL}, which the bindings turn into an exception because it means a bug here.
 */
package io.kvprefix.internal.ffi;
