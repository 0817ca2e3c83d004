package io.kvprefix.zmq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The provisional snapshot protocol's rules ({@link SnapshotSync}, {@link SnapshotReply}), driven without sockets. */
class SnapshotSyncTest {
    /** Records what the state machine asked for, as a readable script; a payload "bad" fails to apply. */
    static final class ScriptPort extends ScriptedPort implements SnapshotSync.Port {
        boolean sendWorks = true;

        @Override
        public void apply(long seq, byte[] payload) {
            String p = new String(payload, StandardCharsets.UTF_8);
            if (p.equals("bad")) {
                throw new IllegalStateException("undecodable");
            }
            actions.add(seq < 0 ? "snap " + p : "apply " + seq);
        }

        @Override
        public boolean requestSnapshot() {
            actions.add("request");
            return sendWorks;
        }
    }

    final ScriptPort port = new ScriptPort();
    final SnapshotSync sync = new SnapshotSync(port, 100);

    static byte[] num(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The 16 bytes of test publisher {@code u<N>}: N in the last byte. */
    static byte[] uuidBytes(String name) {
        byte[] u = new byte[16];
        u[15] = (byte) Integer.parseInt(name.substring(1));
        return u;
    }

    /** The identity {@code EngineSession} gives publisher {@code u<N>}. */
    static String id(String name) {
        return "publisher " + HexFormat.of().formatHex(uuidBytes(name));
    }

    static List<byte[]> reply(String uuid, long resume, String... batches) {
        List<byte[]> f = new ArrayList<>(List.of(uuidBytes(uuid), num(resume), num(batches.length)));
        for (String s : batches) {
            f.add(b(s));
        }
        f.add(SnapshotReply.END);
        return f;
    }

    @Test
    void anIdleEngineGivesItsWholeCacheThroughTheSnapshot() {
        sync.start();
        String[] many = new String[5000];
        for (int i = 0; i < many.length; i++) {
            many[i] = "b" + i;
        }
        sync.onSnapshotFrames(reply("u1", 41, many));
        sync.onHeartbeat(id("u1"), 41);
        assertTrue(sync.synced());
        assertEquals(41, sync.lastApplied());
        assertEquals(1, sync.heartbeats());
        assertEquals(List.of("clear", "request", "clear"), port.actions.subList(0, 3));
        assertEquals(3 + many.length, port.actions.size(), "every snapshot batch applied, nothing else");
        assertEquals("snap b4999", port.actions.getLast());
    }

    @Test
    void liveBatchesHeldMeanwhileApplyExactlyAfterTheResumePoint() {
        sync.start();
        for (long s = 8; s <= 12; s++) {
            sync.onLive(id("u1"), s, b("x"));
        }
        sync.onSnapshotFrames(reply("u1", 10, "s"));
        assertEquals(List.of("clear", "request", "clear", "snap s", "apply 11", "apply 12"), port.actions);
        assertEquals(3, sync.dropped());
        sync.onLive(id("u1"), 12, b("x"));
        sync.onLive(id("u1"), 13, b("x"));
        assertEquals("apply 13", port.actions.getLast());
        assertEquals(4, sync.dropped());
    }

    @Test
    void aGapAfterTheResumePointResyncs() {
        sync.start();
        sync.onLive(id("u1"), 11, b("x"));
        sync.onLive(id("u1"), 13, b("x"));
        sync.onSnapshotFrames(reply("u1", 10, "s"));
        assertEquals(List.of("clear", "request", "clear", "snap s", "apply 11", "clear", "request"), port.actions);
        assertFalse(sync.synced());
        assertTrue(sync.waiting());
    }

    @Test
    void aHeartbeatPastWhatWasAppliedIsAGap() {
        sync.start();
        sync.onSnapshotFrames(reply("u1", 5, "s"));
        sync.onHeartbeat(id("u1"), 5);
        assertTrue(sync.synced());
        sync.onHeartbeat(id("u1"), 7);
        assertFalse(sync.synced());
        assertEquals(List.of("clear", "request"), port.actions.subList(port.actions.size() - 2, port.actions.size()));
    }

    @Test
    void aNewPublisherUuidClearsAndSnapshotsAgain() {
        sync.start();
        sync.onSnapshotFrames(reply("u1", 5, "s"));
        port.actions.clear();
        sync.onLive(id("u2"), 0, b("x"));
        assertEquals(List.of("clear", "request"), port.actions);
        assertFalse(sync.synced());
        sync.onSnapshotFrames(reply("u2", 0, "t"));
        assertEquals(List.of("clear", "request", "clear", "snap t"), port.actions);
        assertTrue(sync.synced());
        assertEquals(id("u2"), sync.uuid());
        assertEquals(2, sync.snapshotsApplied());
    }

    @Test
    void aSnapshotFromTheOldPublisherIsNotTaken() {
        sync.start();
        sync.onLive(id("u2"), 3, b("x"));
        sync.onSnapshotFrames(reply("u1", 9, "s"));
        assertFalse(sync.synced());
        assertFalse(port.actions.contains("snap s"));
    }

    @Test
    void aDamagedSnapshotFailsClosed() {
        sync.start();
        List<byte[]> cut = reply("u1", 5, "a", "b", "c");
        cut.removeLast();
        sync.onSnapshotFrames(cut);
        assertFalse(sync.synced());
        assertEquals(1, sync.snapshotsRefused());
        sync.onLive(id("u1"), 6, b("x"));
        assertFalse(port.actions.contains("apply 6"), "nothing live applies on a refused snapshot");

        sync.onLive(id("u2"), 0, b("x"));
        sync.onSnapshotFrames(reply("u2", 0, "a", "bad", "c"));
        assertFalse(sync.synced());
        assertEquals(2, sync.snapshotsRefused());
        assertEquals("clear", port.actions.getLast(), "a half-applied snapshot is cleared again");
    }

    @Test
    void malformedRepliesAreRefusedBeforeAnythingApplies() {
        assertThrows(
                IllegalArgumentException.class, () -> SnapshotReply.parse(List.of(uuidBytes("u1"), num(1), num(0))));
        assertThrows(
                IllegalArgumentException.class,
                () -> SnapshotReply.parse(List.of(uuidBytes("u1"), num(1), num(2), b("a"), SnapshotReply.END)));
        assertThrows(
                IllegalArgumentException.class,
                () -> SnapshotReply.parse(List.of(uuidBytes("u1"), b("1"), num(0), SnapshotReply.END)));
        assertThrows(
                IllegalArgumentException.class,
                () -> SnapshotReply.parse(List.of(b("short"), num(1), num(0), SnapshotReply.END)));
        assertEquals(2, SnapshotReply.parse(reply("u1", 3, "a", "b")).batches().size());
    }

    @Test
    void tooManyLiveBatchesWhileWaitingAskAgain() {
        SnapshotSync small = new SnapshotSync(port, 2);
        small.start();
        small.onLive(id("u1"), 1, b("x"));
        small.onLive(id("u1"), 2, b("x"));
        small.onLive(id("u1"), 3, b("x"));
        assertEquals(List.of("clear", "request", "clear", "request"), port.actions);
        small.onSnapshotFrames(reply("u1", 2, "s"));
        assertEquals("apply 3", port.actions.getLast());
    }

    @Test
    void anAnswerNobodyAskedForIsIgnored() {
        sync.start();
        sync.onSnapshotFrames(reply("u1", 5, "s"));
        sync.onLive(id("u1"), 6, b("x"));
        int before = port.actions.size();
        sync.onSnapshotFrames(reply("u1", 3, "old"));
        assertEquals(before, port.actions.size(), "a late answer neither clears nor applies");
        assertTrue(sync.synced());
        assertEquals(6, sync.lastApplied());
    }
}
