/**
 * The stand-in's parts: the HTTP server and its request and response shapes, the KV-event encoder
 * and publisher, and the real-time driver of the engine model. docs/STANDIN.md has the sources.
 */
package io.kvprefix.standin.internal;
