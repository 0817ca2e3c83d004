package io.kvprefix.metrics.internal;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.1 exchange on an accepted socket for the metrics endpoint (docs/METRICS.md section 2): it
 * reads the request line and headers (at most {@link #MAX_HEAD} bytes; a body is not read) and writes
 * one answer with {@code Content-Length} and {@code Connection: close}. The socket's read timeout and
 * the server's deadline bound how long a client may take.
 *
 * <p>Thread-safety: not thread-safe; one thread serves one connection.
 */
public final class HttpConnection {
    /** The most bytes of request line and headers read; a longer head is answered 431. */
    public static final int MAX_HEAD = 8192;

    /** A request's method and path (the query removed). */
    public record Request(String method, String path) {}

    private final Socket socket;

    /** Serves the exchange on {@code socket}. */
    public HttpConnection(Socket socket) {
        this.socket = socket;
    }

    /**
     * Reads the request's head.
     *
     * @return the request, or null when the client closed first or sent a malformed or oversized head
     *     (answered 400 or 431 already)
     * @throws IOException when reading fails, a timeout included
     */
    public Request readRequest() throws IOException {
        InputStream in = new BufferedInputStream(socket.getInputStream(), 1024);
        byte[] head = new byte[MAX_HEAD];
        int n = 0;
        int lineEnd = -1;
        while (true) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            if (n == MAX_HEAD) {
                send(431, "text/plain; charset=utf-8", "", "request header fields too large\n", false);
                return null;
            }
            head[n++] = (byte) b;
            if (b == '\n') {
                if (lineEnd < 0) {
                    lineEnd = n;
                }
                if (endsHead(head, n)) {
                    break;
                }
            }
        }
        String line = new String(head, 0, lineEnd, StandardCharsets.ISO_8859_1).strip();
        String[] parts = line.split(" ");
        if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
            send(400, "text/plain; charset=utf-8", "", "bad request\n", false);
            return null;
        }
        try {
            String path = new URI(parts[1]).getPath();
            return new Request(parts[0], path == null ? "" : path);
        } catch (URISyntaxException e) {
            send(400, "text/plain; charset=utf-8", "", "bad request\n", false);
            return null;
        }
    }

    private static boolean endsHead(byte[] b, int n) {
        return (n >= 2 && b[n - 2] == '\n') || (n >= 3 && b[n - 2] == '\r' && b[n - 3] == '\n');
    }

    /** Writes an answer with a text body. */
    public void send(int status, String type, String extraHeaders, String body, boolean head) throws IOException {
        send(status, type, extraHeaders, body.getBytes(StandardCharsets.UTF_8), head);
    }

    /**
     * Writes an answer and flushes it.
     *
     * @param extraHeaders more header lines, each ending in CRLF, or empty
     * @param head true for a HEAD request: the headers are written, the body is not
     */
    public void send(int status, String type, String extraHeaders, byte[] body, boolean head) throws IOException {
        String headers = "HTTP/1.1 " + status + " " + reason(status) + "\r\n"
                + "Content-Type: " + type + "\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + extraHeaders
                + "Connection: close\r\n\r\n";
        OutputStream out = socket.getOutputStream();
        out.write(headers.getBytes(StandardCharsets.ISO_8859_1));
        if (!head) {
            out.write(body);
        }
        out.flush();
        socket.shutdownOutput();
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 431 -> "Request Header Fields Too Large";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
    }
}
