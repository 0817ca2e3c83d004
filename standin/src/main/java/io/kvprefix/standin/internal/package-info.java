/**
 * The stand-in's parts: the HTTP server and vLLM's request checks and response bodies
 * (docs/STANDIN.md section 2), the real-time driver of the engine model and the KV-event encoder and
 * publisher (section 3), the metrics text (section 4). The vLLM files and commits each follows are
 * listed in the {@code io.kvprefix.standin} package description.
 */
package io.kvprefix.standin.internal;
