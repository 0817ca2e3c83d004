package io.kvprefix.spring;

import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.nio.file.Path;

/**
 * The stand-in engine process these tests start ({@code kvprefix standin} is the command line's, a
 * module this one cannot depend on): the options the tests use, mapped to {@link StandinSettings},
 * then {@link Standin#run}, the lifecycle the command runs (one {@code READY} line, stop on SIGTERM or
 * when standard input closes).
 */
public final class StandinLauncher {
    private StandinLauncher() {}

    public static void main(String[] args) throws InterruptedException {
        StandinSettings.Builder b = StandinSettings.builder();
        int http = 0;
        int events = 0;
        int replay = 0;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--engines" -> b.engines(Integer.parseInt(v));
                case "--worker-id" -> b.firstWorker(Long.parseLong(v));
                case "--time-scale" -> b.timeScale(Double.parseDouble(v));
                case "--model" -> b.model(v);
                case "--block-size" -> b.blockSize(Integer.parseInt(v));
                case "--port" -> http = Integer.parseInt(v);
                case "--events-port" -> events = Integer.parseInt(v);
                case "--replay-port" -> replay = Integer.parseInt(v);
                case "--tokenizer" -> b.tokenizer(Path.of(v));
                case "--speeds" -> {
                    String[] s = v.split(",");
                    b.speeds(Double.parseDouble(s[0]), Double.parseDouble(s[1]));
                }
                case "--enable-prompt-tokens-details" -> {
                    b.promptTokensDetails(true);
                    i--;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
            i++;
        }
        b.ports(http, events, replay);
        Standin.run(b.build(), System.out);
    }
}
