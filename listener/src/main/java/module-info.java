/**
 * kvprefix-zmq: feeds a kvprefix index from engines' KV events over ZMQ (see the {@code io.kvprefix.zmq}
 * package).
 *
 * <p>One package is exported, {@code io.kvprefix.zmq}; {@code io.kvprefix.zmq.internal} is an
 * implementation detail. The core library is required transitively, since the exported API takes and
 * returns its types ({@code PrefixIndex}, {@code KvEvent}, {@code Worker}). JeroMQ is a named module
 * ({@code org.zeromq.jeromq}); msgpack-core 0.9.10 has no module descriptor and no
 * {@code Automatic-Module-Name}, so it is required by the name the JDK derives from its jar,
 * {@code msgpack.core} (stable as long as the jar keeps Maven's {@code msgpack-core-VERSION.jar} name).
 */
module io.kvprefix.zmq {
    requires transitive io.kvprefix;
    requires org.zeromq.jeromq;
    requires msgpack.core;
    requires java.net.http;

    exports io.kvprefix.zmq;
}
