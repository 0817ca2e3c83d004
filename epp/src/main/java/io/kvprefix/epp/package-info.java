/**
 * {@code kvprefix epp}: an Endpoint Picker for the Gateway API Inference Extension (GIE), a front door
 * over the router service ({@code io.kvprefix.service}) that any GIE gateway (Envoy Gateway, kgateway,
 * Istio, GKE, agentgateway, NGINX Gateway Fabric) asks, per request, which engine pod to use.
 * {@link io.kvprefix.epp.EppServer} serves Envoy's ext_proc {@code ExternalProcessor} and gRPC health;
 * docs/EPP.md states the protocol as implemented and how to run it.
 *
 * <p><b>Why grpc-java and Envoy's published stubs.</b> The protocol is Envoy's ext_proc, so the
 * picker takes Envoy's own generated messages ({@code io.envoyproxy.controlplane:api}, which holds
 * {@code ExternalProcessorGrpc}) rather than a copy of the protos: a field Envoy adds arrives with
 * the next stub release. grpc-java serves it on Netty (the shaded build, so its Netty does not meet
 * Vert.x's), and its health service answers the kubelet's gRPC probes. One protobuf runtime (4.x,
 * grpc's) runs the stubs, whose gencode is from the 3.25 line; the tests round-trip every message the
 * picker uses through it.
 */
package io.kvprefix.epp;
