package io.kvprefix.standin.internal;

import java.nio.file.Path;

/**
 * The {@link PromptSource} of {@code --tokenizer DIR}: {@link LocalTokens} over the directory, or none.
 *
 * <p>Thread-safety: stateless.
 */
public final class TokenizerSource {
    private TokenizerSource() {}

    /** The source for {@code dir}, or {@link PromptSource#none()} when it is null. */
    public static PromptSource open(Path dir) {
        if (dir == null) {
            return PromptSource.none();
        }
        return LocalTokens.open(dir);
    }
}
