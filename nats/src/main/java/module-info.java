/**
 * kvprefix-nats: a router fleet on NATS JetStream (see the {@code io.kvprefix.nats} package).
 *
 * <p>One package is exported, {@code io.kvprefix.nats}; {@code io.kvprefix.nats.internal} is an
 * implementation detail. The core library and the ZMQ listener are required transitively, since the
 * exported API takes and returns their types ({@code PrefixIndex}, {@code EngineEndpoint},
 * {@code SubscriberStats}). jnats has no module descriptor; its jar names itself
 * {@code io.nats.jnats} ({@code Automatic-Module-Name}). It is required transitively too: the API
 * takes a jnats {@code Connection}, so an application shares its own connection (its TLS, credentials
 * and reconnect policy) with the fleet; hence the suppressed warning about a transitive automatic
 * module.
 */
@SuppressWarnings("requires-transitive-automatic")
module io.kvprefix.nats {
    requires transitive io.kvprefix;
    requires transitive io.kvprefix.zmq;
    requires transitive io.nats.jnats;
    requires com.fasterxml.jackson.core;
    requires msgpack.core;

    exports io.kvprefix.nats;
}
