package io.kvprefix.spring;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** The gateway application the tests start: nothing but auto-configuration and the properties each test gives. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestGateway {}
