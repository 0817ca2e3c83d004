package io.kvprefix.standin;

/**
 * A stand-in process for the tests (the command line's {@code kvprefix standin} lives in the cli module,
 * which this one cannot depend on): {@code --engines N --time-scale S} and {@link Standin#run}, the same
 * lifecycle the command runs.
 */
public final class StandinMain {
    private StandinMain() {}

    public static void main(String[] args) throws InterruptedException {
        StandinSettings.Builder b = StandinSettings.builder();
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--engines" -> b.engines(Integer.parseInt(args[i + 1]));
                case "--time-scale" -> b.timeScale(Double.parseDouble(args[i + 1]));
                case "--worker-id" -> b.firstWorker(Long.parseLong(args[i + 1]));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Standin.run(b.build(), System.out);
    }
}
