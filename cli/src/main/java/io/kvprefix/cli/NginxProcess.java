package io.kvprefix.cli;

import io.kvprefix.standin.ChildProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code nginx} as the proxy benchmark's yardstick (docs/SERVE.md section 7): a plain
 * round-robin reverse proxy in front of the same engines, configured in a temporary directory (its
 * pid file, logs and temp paths there, nothing of the system's), on a free loopback port, one worker
 * process, {@code proxy_buffering off} so an event stream passes as it comes, HTTP/1.1 keep-alive to
 * the engines. Run in the foreground ({@code daemon off}) as a child; closed, it gets SIGTERM by its
 * pid (then SIGKILL) and is waited for.
 *
 * <p>Thread-safety: one owner.
 */
final class NginxProcess implements AutoCloseable {
    static final Path BINARY = Path.of("/usr/sbin/nginx");

    private final ChildProcess process;
    private final int port;
    private final Path dir;

    private NginxProcess(ChildProcess process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    /** The configuration for {@code upstreams} (host:port each) on {@code port}, everything under {@code dir}. */
    static String config(Path dir, int port, List<String> upstreams) {
        StringBuilder servers = new StringBuilder();
        for (String u : upstreams) {
            servers.append("    server ").append(u).append(";\n");
        }
        String d = dir.toAbsolutePath().toString();
        return "worker_processes 1;\nworker_rlimit_nofile 65536;\npid " + d + "/nginx.pid;\nerror_log " + d
                + "/error.log warn;\n"
                + "events { worker_connections 16384; }\n"
                + "http {\n  access_log off;\n  client_body_temp_path " + d + "/body;\n  proxy_temp_path " + d
                + "/proxy;\n  fastcgi_temp_path " + d + "/fastcgi;\n  uwsgi_temp_path " + d + "/uwsgi;\n"
                + "  scgi_temp_path " + d + "/scgi;\n  client_max_body_size 32m;\n  client_body_buffer_size 1m;\n"
                + "  upstream engines {\n" + servers + "    keepalive 1024;\n  }\n"
                + "  server {\n    listen 127.0.0.1:" + port + ";\n    location / {\n"
                + "      proxy_pass http://engines;\n      proxy_http_version 1.1;\n"
                + "      proxy_set_header Connection \"\";\n      proxy_buffering off;\n"
                + "      proxy_read_timeout 600s;\n      proxy_send_timeout 600s;\n    }\n  }\n}\n";
    }

    /** Starts nginx in front of {@code upstreams} and waits until its port accepts connections. */
    static NginxProcess start(Path dir, List<String> upstreams) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        int port = freePort();
        Path conf = dir.resolve("nginx.conf");
        Files.writeString(conf, config(dir, port, upstreams), StandardCharsets.UTF_8);
        ChildProcess p = ChildProcess.start(
                "nginx",
                new ProcessBuilder(
                                BINARY.toString(),
                                "-p",
                                dir.toAbsolutePath().toString(),
                                "-c",
                                conf.toAbsolutePath().toString(),
                                "-g",
                                "daemon off;")
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("nginx.out").toFile()));
        NginxProcess n = new NginxProcess(p, port, dir);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && p.alive()) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return n;
            } catch (IOException notYet) {
                Thread.sleep(50); // polling for the port, with the deadline above
            }
        }
        n.close();
        throw new IOException("nginx did not start: " + LiveProcess.tail(dir.resolve("error.log")) + " "
                + LiveProcess.tail(dir.resolve("nginx.out")));
    }

    /** A port that was free a moment ago (nginx binds it right after). */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    int port() {
        return port;
    }

    /** The pids of the master and its workers. */
    List<Long> pids() {
        return java.util.stream.Stream.concat(
                        java.util.stream.Stream.of(process.process().toHandle()),
                        process.process().descendants())
                .map(ProcessHandle::pid)
                .toList();
    }

    Path dir() {
        return dir;
    }

    /** SIGTERM by its pid, then SIGKILL if it has not ended within 30 s ({@link ChildProcess#close}). */
    @Override
    public void close() {
        process.close();
    }
}
