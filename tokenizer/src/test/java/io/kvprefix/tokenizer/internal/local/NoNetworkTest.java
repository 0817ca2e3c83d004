package io.kvprefix.tokenizer.internal.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.testing.SharedData;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.Tokenizers;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Nothing reaches the network while local mode loads a tokenizer and tokenizes (docs/TOKENIZER.md
 * section 3.1). DJL's usage ping ({@code ai.djl.util.Ec2Utils.callHome}, DJL @ {@code af1d0b80})
 * connects to the EC2 metadata address 169.254.169.254 with {@code Proxy.NO_PROXY}, past any proxy
 * selector, so the test catches it where it lands: a child JVM runs in a network namespace of its
 * own ({@code unshare -n}, as root) in which 169.254.169.254 is a local address with a listener
 * that counts connections. The child loads Qwen3's tokenizer and tokenizes, then, as the control
 * that proves the listener sees the ping, turns DJL's switches off and calls the ping itself.
 */
class NoNetworkTest {
    private static final String METADATA = "169.254.169.254";

    @Test
    void djlNeitherPingsNorDownloads() throws Exception {
        Path dir = TokenizerData.model("qwen3");
        List<String> cmd = new ArrayList<>(List.of(
                "unshare",
                "-n",
                "sh",
                "-c",
                "ip link set lo up && ip addr add " + METADATA + "/32 dev lo && exec \"$0\" \"$@\"",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                Probe.class.getName(),
                dir.toString()));
        Path out = Files.createTempFile("no-network", ".out");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        boolean done = p.waitFor(5, TimeUnit.MINUTES);
        String text = Files.readString(out, StandardCharsets.UTF_8);
        if (!done) {
            p.destroyForcibly();
            Assertions.fail("the probe did not finish: " + text);
        }
        if (p.exitValue() != 0 && text.contains("unshare")) {
            unavailable("needs unshare -n and ip (as root) to give the probe a network namespace: " + text.strip());
        }
        assertEquals(0, p.exitValue(), text);
        assertTrue(text.contains("loading: 0 connections"), text);
        assertTrue(text.matches("(?s).*control: [1-9]\\d* connections.*"), "the listener sees DJL's ping: " + text);
    }

    private static void unavailable(String why) {
        if (SharedData.isCi()) {
            Assertions.fail(why + "; CI=true, so this is a failure, not a skip");
        }
        System.err.println("SKIPPED: " + why);
        Assumptions.abort(why);
    }

    /** The child: a listener on the metadata address, then the load, then the control. */
    public static final class Probe {
        private static final LinkedBlockingQueue<Integer> ACCEPTED = new LinkedBlockingQueue<>();

        public static void main(String[] args) throws Exception {
            try (ServerSocket server = new ServerSocket(80, 50, InetAddress.getByName(METADATA))) {
                Thread t = new Thread(() -> accept(server), "metadata-listener");
                t.setDaemon(true);
                t.start();
                try (PromptTokenizer tok = Tokenizers.open("local:" + args[0])) {
                    ObjectNode body = new ObjectMapper().createObjectNode().put("prompt", "hello");
                    tok.completion(body);
                }
                System.out.println("loading: " + drain() + " connections");
                System.setProperty("OPT_OUT_TRACKING", "false");
                System.setProperty("ai.djl.offline", "false");
                ai.djl.util.Ec2Utils.callHome("kvprefix-control");
                System.out.println("control: " + drain() + " connections");
            }
        }

        private static void accept(ServerSocket server) {
            while (true) {
                try (Socket s = server.accept()) {
                    ACCEPTED.add(s.getPort());
                } catch (IOException e) {
                    return;
                }
            }
        }

        /** The connections accepted so far: a marker connection of our own, once seen, ends the count. */
        private static int drain() throws Exception {
            int marker;
            try (Socket s = new Socket(METADATA, 80)) {
                marker = s.getLocalPort();
            }
            int n = 0;
            while (true) {
                Integer port = ACCEPTED.poll(60, TimeUnit.SECONDS);
                if (port == null) {
                    throw new IllegalStateException("the listener stopped accepting");
                }
                if (port == marker) {
                    return n;
                }
                n++;
            }
        }
    }
}
