package org.jameskvs.faults;

import org.jameskvs.testkit.ExternalTool;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class's network namespaces ({@link NetLab}): created before its first test, removed after
 * its last. Where namespaces are unavailable (not root, no {@code ip}) the reason is kept and each
 * test that calls {@link #lab()} is SKIPPED (an assumption), never passed; under {@code bin/test}
 * a missing tool fails instead ({@link ExternalTool}).
 */
final class NamespacesExtension implements BeforeAllCallback, AfterAllCallback {
    private final int nodes;
    private String unavailable;
    private NetLab lab;
    private boolean netem;

    NamespacesExtension(int nodes) {
        this.nodes = nodes;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        unavailable = NetLab.unavailableReason();
        if (unavailable == null) {
            netem = NetLab.hasNetem();
            lab = NetLab.create(nodes);
        } else {
            System.out.println("network namespaces unavailable: " + unavailable);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (lab != null) {
            lab.close();
        }
    }

    /** The namespaces; skips the calling test where there are none. */
    NetLab lab() {
        ExternalTool.assumeAvailable(unavailable == null, "network namespaces unavailable: " + unavailable);
        return lab;
    }

    /** Whether the kernel has {@code sch_netem} (delay). */
    boolean netem() {
        return netem;
    }
}
