package io.kvprefix.epp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The manifests in {@code deploy/} read into fabric8's Kubernetes model (the GIE and Gateway API
 * resources as generic ones) and checked against what GIE's v1 API requires and what the picker
 * needs (docs/EPP.md section 8): the pool's selector, its single target port and its picker reference
 * resolve to the vLLM pods and the picker's Service; the picker's probes ask its gRPC health services;
 * every engine publishes its KV events where the picker's {@code --engine} list reads them. They are
 * not applied to a cluster.
 */
class DeployManifestsTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private final List<JsonNode> docs = read();
    private final GenericKubernetesResource pool = generic("InferencePool");
    private final Deployment epp = deployment("kvprefix-epp");
    private final Deployment vllm = deployment("vllm");
    private final Service eppService = service("kvprefix-epp");

    @Test
    void theInferencePoolHasGieV1sRequiredFields() {
        assertEquals("inference.networking.k8s.io/v1", pool.getApiVersion());
        Map<String, Object> spec = map(pool.getAdditionalProperties().get("spec"));
        Map<String, Object> labels = map(map(spec.get("selector")).get("matchLabels"));
        assertTrue(!labels.isEmpty(), "selector.matchLabels");
        assertTrue(
                vllm.getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getLabels()
                        .entrySet()
                        .containsAll(labels.entrySet()),
                "the selector picks the vLLM pods");
        List<?> ports = (List<?>) spec.get("targetPorts");
        assertEquals(1, ports.size(), "v1 allows exactly one target port");
        int target = ((Number) map(ports.get(0)).get("number")).intValue();
        assertTrue(ports(container(vllm)).contains(target), "the target port is the engines' HTTP port");
        Map<String, Object> ref = map(spec.get("endpointPickerRef"));
        assertEquals(eppService.getMetadata().getName(), ref.get("name"));
        assertTrue(Set.of("FailOpen", "FailClose").contains(ref.getOrDefault("failureMode", "FailClose")));
        assertEquals("Service", ref.getOrDefault("kind", "Service"));
        Object port = map(ref.get("port")).get("number"); // required when the kind is Service
        assertNotNull(port, "endpointPickerRef.port.number");
        ServicePort sp = eppService.getSpec().getPorts().stream()
                .filter(p -> p.getPort().equals(((Number) port).intValue()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("the picker's Service has no port " + port));
        assertEquals(arg(container(epp), "--port"), "" + sp.getTargetPort().getIntVal(), "the ext_proc port");
    }

    @Test
    void thePickersProbesAskItsGrpcHealthServices() {
        Container c = container(epp);
        String health = arg(c, "--health-port");
        assertEquals(health, "" + c.getReadinessProbe().getGrpc().getPort());
        assertEquals(EppServer.READINESS, c.getReadinessProbe().getGrpc().getService());
        assertEquals(health, "" + c.getLivenessProbe().getGrpc().getPort());
        assertEquals(EppServer.LIVENESS, c.getLivenessProbe().getGrpc().getService());
        assertTrue(ports(c).contains(Integer.parseInt(health)));
        assertEquals(
                eppService.getSpec().getSelector(),
                epp.getSpec().getTemplate().getMetadata().getLabels(),
                "the Service selects the picker's pods");
    }

    @Test
    void everyEngineThePickerReadsPublishesItsEvents() throws IOException {
        Container v = container(vllm);
        JsonNode kv = YAML.readTree(arg(v, "--kv-events-config"));
        assertTrue(kv.get("enable_kv_cache_events").asBoolean());
        assertEquals("zmq", kv.get("publisher").asText());
        int events = Integer.parseInt(kv.get("endpoint").asText().replaceAll(".*:", ""));
        int replay = Integer.parseInt(kv.get("replay_endpoint").asText().replaceAll(".*:", ""));
        assertEquals(arg(container(epp), "--block-size"), arg(v, "--block-size"));
        List<String> engines = args(container(epp), "--engine");
        assertTrue(engines.size() >= 2, "" + engines);
        for (String e : engines) {
            int eq = e.indexOf('=');
            EngineSpec s = EngineSpec.parse(e.substring(0, eq + 1) + "http://" + e.substring(eq + 1));
            assertTrue(ports(v).contains(s.port()), e);
            String ev = s.events().orElseThrow().endpoint();
            assertEquals("tcp://" + s.host() + ":" + events, ev, e);
            assertEquals(
                    "tcp://" + s.host() + ":" + replay,
                    s.events().orElseThrow().replayEndpoint().orElseThrow(),
                    e);
        }
    }

    @Test
    void theRouteSendsTheOpenAiPathsToThePool() {
        GenericKubernetesResource route = generic("HTTPRoute");
        GenericKubernetesResource gateway = generic("Gateway");
        Map<String, Object> spec = map(route.getAdditionalProperties().get("spec"));
        Map<String, Object> parent = map(((List<?>) spec.get("parentRefs")).get(0));
        assertEquals(gateway.getMetadata().getName(), parent.get("name"));
        Map<String, Object> rule = map(((List<?>) spec.get("rules")).get(0));
        Map<String, Object> backend = map(((List<?>) rule.get("backendRefs")).get(0));
        assertEquals("inference.networking.k8s.io", backend.get("group"));
        assertEquals("InferencePool", backend.get("kind"));
        assertEquals(pool.getMetadata().getName(), backend.get("name"));
        assertEquals(pool.getMetadata().getNamespace(), route.getMetadata().getNamespace());
    }

    // ------------------------------------------------------------------ reading

    private static List<JsonNode> read() {
        List<JsonNode> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(RepoPaths.root().resolve("deploy"))) {
            for (Path f :
                    files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                try (var it = YAML.readerFor(JsonNode.class).readValues(f.toFile())) {
                    while (it.hasNext()) {
                        out.add((JsonNode) it.next());
                    }
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out;
    }

    private JsonNode doc(String kind, String name) {
        return docs.stream()
                .filter(d -> d.path("kind").asText().equals(kind)
                        && (name == null
                                || d.path("metadata").path("name").asText().equals(name)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("deploy/ has no " + kind + " " + name));
    }

    private GenericKubernetesResource generic(String kind) {
        return convert(doc(kind, null), GenericKubernetesResource.class);
    }

    private Deployment deployment(String name) {
        return convert(doc("Deployment", name), Deployment.class);
    }

    private Service service(String name) {
        return convert(doc("Service", name), Service.class);
    }

    private static <T> T convert(JsonNode n, Class<T> type) {
        try {
            return YAML.treeToValue(n, type);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        assertTrue(o instanceof Map, "expected a mapping, got " + o);
        return (Map<String, Object>) o;
    }

    private static Container container(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    private static List<Integer> ports(Container c) {
        return c.getPorts().stream().map(ContainerPort::getContainerPort).toList();
    }

    private static List<String> args(Container c, String option) {
        List<String> a = c.getArgs();
        List<String> out = new ArrayList<>();
        for (int i = 0; i + 1 < a.size(); i++) {
            if (a.get(i).equals(option)) {
                out.add(a.get(i + 1));
            }
        }
        return out;
    }

    private static String arg(Container c, String option) {
        List<String> v = args(c, option);
        assertEquals(1, v.size(), option + " given once in " + c.getArgs());
        return v.get(0);
    }
}
