package io.kvprefix.spring.internal;

import io.kvprefix.service.RouterService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs the service's before-scrape hooks ({@link RouterService#beforeScrape()}: the index's gauges and
 * the feed's counters, which serve refreshes on each {@code /metrics} request) every second on a
 * daemon thread, since Spring Boot's {@code /actuator/prometheus} renders the registry directly.
 *
 * <p>Thread-safety: thread-safe; {@link #close()} stops the thread.
 */
public final class ScrapeRefresh implements AutoCloseable {
    private final ScheduledExecutorService timer;

    private ScrapeRefresh(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    /** Starts refreshing {@code service}'s scraped meters. */
    public static ScrapeRefresh start(RouterService service) {
        ScheduledExecutorService t = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread th = new Thread(r, "kvprefix-spring-meters");
            th.setDaemon(true);
            return th;
        });
        t.scheduleWithFixedDelay(
                () -> {
                    try {
                        service.beforeScrape().forEach(Runnable::run);
                    } catch (RuntimeException e) {
                        System.getLogger("io.kvprefix.spring")
                                .log(System.Logger.Level.DEBUG, "refreshing the meters: " + e);
                    }
                },
                1,
                1,
                TimeUnit.SECONDS);
        return new ScrapeRefresh(t);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
