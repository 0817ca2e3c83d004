package io.kvprefix.zmq.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * What a sync state machine driven without sockets asked its port for, as a readable script: the
 * one home of the recording that {@link EngineSyncTest} and {@link SnapshotSyncTest} read ("clear"
 * when the engine's workers are cleared; log lines are not recorded). Each test's port adds the
 * calls of its own port interface.
 */
abstract class ScriptedPort {
    final List<String> actions = new ArrayList<>();

    public void clearWorkers() {
        actions.add("clear");
    }

    public void log(boolean warning, String message) {}
}
