/** A router fleet on NATS JetStream (design prose to come). */
package io.kvprefix.nats;
