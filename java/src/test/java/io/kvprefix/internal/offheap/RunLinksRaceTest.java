package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.TestScale;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.jetbrains.lincheck.Lincheck;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.junit.jupiter.api.Test;

/**
 * The child lists' protocol under a model checker (Lincheck's, which runs each scenario under many
 * thread interleavings it chooses): a branch pushes its run without the parent's lock, a dying run is
 * unlinked under it (java/src/main/java/io/kvprefix/internal/offheap/package-info.java, the protocol
 * of a branch). One test per race, each with a negative control: the same scenario on links that
 * leave that race's rule out ({@link RunLinks.Rule}), which the checker must catch.
 *
 * <p>Short in the normal suite (in a JVM of its own: java/pom.xml's {@code model-checking} execution,
 * since Lincheck's agent rewrites classes); in full ({@value #FULL} interleavings a scenario) with
 * {@code mvn -pl java test-compile surefire:test@model-checking -Dkvprefix.test.scale=long}.
 */
class RunLinksRaceTest {
    private static final int FULL = 20_000;
    private static final int INVOCATIONS = TestScale.iterations(200, FULL);
    private static final int PARENT = 0;

    /** Two branches off one run push at once: both end in the list (the head is claimed by CAS). */
    @Test
    void twoPushesKeepBoth() {
        check(null, this::twoPushes);
    }

    @Test
    void twoPushesLoseOneWithoutTheHeadsCas() {
        fails(RunLinks.Rule.CAS_HEAD, this::twoPushes);
    }

    /** Two branches at different offsets: the bound ends past the deeper one (raised by CAS). */
    @Test
    void twoPushesRaiseTheBoundToTheDeeper() {
        check(null, this::twoBounds);
    }

    @Test
    void twoPushesLoseTheDeeperBoundWithoutItsCas() {
        fails(RunLinks.Rule.CAS_BOUND, this::twoBounds);
    }

    /** The head dies while a branch is pushed above it: the unlink waits for the push's back link. */
    @Test
    void unlinkingTheHeadDuringAPushAboveIt() {
        check(null, this::unlinkUnderPush);
    }

    @Test
    void unlinkingTheHeadDuringAPushIsLostWithoutTheWait() {
        fails(RunLinks.Rule.WAIT_FOR_PUSH, this::unlinkUnderPush);
    }

    /** The head dies while a branch is pushed onto the run below it: that run's back link is the push's. */
    @Test
    void unlinkingTheHeadWhileAPushLandsOnTheNext() {
        check(null, this::unlinkBesidePush);
    }

    @Test
    void unlinkingTheHeadErasesThePushsBackLinkWithoutItsCas() {
        fails(RunLinks.Rule.CAS_BACK_LINK, this::unlinkBesidePush);
    }

    // ------------------------------------------------------------------ the scenarios

    private void twoPushes(RunLinks links) {
        both(() -> links.link(PARENT, 1, 3), () -> links.link(PARENT, 2, 5));
        expectList(links, 1, 2);
    }

    private void twoBounds(RunLinks links) {
        both(() -> links.link(PARENT, 1, 5), () -> links.link(PARENT, 2, 3));
        if (links.attachBound(PARENT) != 6) {
            throw new AssertionError("attach bound " + links.attachBound(PARENT) + ", not 6");
        }
    }

    private void unlinkUnderPush(RunLinks links) {
        links.link(PARENT, 1, 0);
        ReentrantLock parentLock = new ReentrantLock(); // the parent run's lock, which an unlink holds
        both(() -> links.link(PARENT, 2, 1), () -> locked(parentLock, () -> links.unlink(PARENT, 1)));
        expectList(links, 2);
    }

    private void unlinkBesidePush(RunLinks links) {
        links.link(PARENT, 1, 0);
        links.link(PARENT, 2, 1);
        ReentrantLock parentLock = new ReentrantLock();
        both(() -> locked(parentLock, () -> links.unlink(PARENT, 2)), () -> links.link(PARENT, 3, 2));
        expectList(links, 1, 3);
    }

    // ------------------------------------------------------------------ the harness

    private interface Scenario {
        void run(RunLinks links);
    }

    private static void check(RunLinks.Rule dropped, Scenario s) {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> s.run(new RunLinks(dropped)));
    }

    private static void fails(RunLinks.Rule dropped, Scenario s) {
        LincheckAssertionError e = assertThrows(
                LincheckAssertionError.class,
                () -> check(dropped, s),
                "the model checker found no interleaving that breaks the list without " + dropped);
        assertTrue(
                String.valueOf(e.getMessage()).contains("java.lang.AssertionError"),
                "the checker failed, but not on the scenario's check: " + e.getMessage());
    }

    private static void locked(ReentrantLock lock, Runnable r) {
        lock.lock();
        try {
            r.run();
        } finally {
            lock.unlock();
        }
    }

    private static void both(Runnable a, Runnable b) {
        Thread t = new Thread(b);
        t.start();
        a.run();
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The parent's list holds exactly {@code runs} (in any order), and every back link names the run before it. */
    private static void expectList(RunLinks links, int... runs) {
        List<Integer> seen = new ArrayList<>();
        int before = -1;
        for (int c = links.first(PARENT); c >= 0 && seen.size() <= runs.length; c = links.next(c)) {
            if (links.previous(c) != before) {
                throw new AssertionError("run " + c + "'s back link is " + links.previous(c) + ", not " + before);
            }
            seen.add(c);
            before = c;
        }
        List<Integer> want = new ArrayList<>();
        for (int r : runs) {
            want.add(r);
        }
        if (seen.size() != want.size() || !seen.containsAll(want)) {
            throw new AssertionError("the list is " + seen + ", not " + want);
        }
    }
}
