package org.jameskvs.testkit;

import org.junit.jupiter.api.Assumptions;

/**
 * What a test does when an external tool it needs is missing (Postfix's smtp-source, docker-compose,
 * network namespaces): it is skipped and says why, so that {@code mvn test} runs on a machine without
 * them. bin/test, after bin/setup installed every tool, passes {@code -Dtools.required=true}: then a
 * missing tool fails the test instead, because a skip there would hide a test CI is meant to run.
 */
public final class ExternalTool {
    /** System property: true = a missing tool fails the test rather than skipping it. */
    public static final String REQUIRED_PROPERTY = "tools.required";

    private ExternalTool() {
    }

    /** Returns when {@code available}; otherwise skips (or, with tools.required, fails) the test, saying {@code missing}. */
    public static void assumeAvailable(boolean available, String missing) {
        if (available) {
            return;
        }
        if (Boolean.getBoolean(REQUIRED_PROPERTY)) {
            throw new AssertionError(missing + " (-D" + REQUIRED_PROPERTY + "=true, as bin/test sets it: run bin/setup, "
                + "which installs the tools the tests use)");
        }
        Assumptions.abort(missing + ": test skipped (bin/setup installs the tools the tests use)");
    }
}
