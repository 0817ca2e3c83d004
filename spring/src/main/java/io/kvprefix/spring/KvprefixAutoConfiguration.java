package io.kvprefix.spring;

import io.kvprefix.service.RouterService;
import io.kvprefix.spring.internal.RoutingStep;
import io.kvprefix.spring.internal.ScrapeRefresh;
import io.kvprefix.spring.internal.ServiceFactory;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The starter's auto-configuration (docs/SPRING.md section 1): with {@code kvprefix.engines} set, one
 * {@link RouterService} built from the {@code kvprefix.*} properties (its meters in the application's
 * {@link MeterRegistry} when it has one, so {@code /actuator/prometheus} shows them), the
 * {@code KvAwareRouting} filter factory over it, and the routing step that filter's routes use.
 *
 * <p>Thread-safety: Spring calls it once, at start; the beans it makes are thread-safe.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration"
        })
@ConditionalOnProperty(name = "kvprefix.engines[0]")
@EnableConfigurationProperties(KvprefixProperties.class)
public class KvprefixAutoConfiguration {
    /** The auto-configuration; Spring makes it. */
    public KvprefixAutoConfiguration() {}

    /** The router service: the index, its feed, the routers, the engines' health, admission and meters. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RouterService kvprefixRouterService(KvprefixProperties properties, ObjectProvider<MeterRegistry> meters) {
        return ServiceFactory.build(properties, meters.getIfAvailable());
    }

    /** Keeps the scraped meters (the index's size and the feed's counters) fresh in the application's registry. */
    @Bean(destroyMethod = "close")
    public ScrapeRefresh kvprefixScrapeRefresh(RouterService service) {
        return ScrapeRefresh.start(service);
    }

    /** The {@code KvAwareRouting} filter factory. */
    @Bean
    public KvAwareRoutingGatewayFilterFactory kvAwareRoutingGatewayFilterFactory(RouterService service) {
        return new KvAwareRoutingGatewayFilterFactory(service);
    }

    /** The routing step of the routes with {@code KvAwareRouting}. */
    @Bean
    public RoutingStep kvprefixRoutingStep(RouterService service) {
        return new RoutingStep(service.meterRegistry());
    }
}
