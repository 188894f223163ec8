package org.jameskvs.app.admin;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;

import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/**
 * {@code bin/kvs-admin}: the KVS side of a James cluster, read with a James node's
 * {@code kvs-spool.properties} (its {@code replication.*} nodes and credentials).
 * <pre>
 * kvs-admin CONF_DIR list [PREFIX]                 every queue: per KVS node holding it the mail count, bytes,
 *                                                  owner, epoch, txn, last seq and digest; the lease (owner, epoch,
 *                                                  record seq) and the copies with their sync state
 * kvs-admin CONF_DIR table QUEUE                   the management table of QUEUE (paths, sync, txn, epoch, note)
 * kvs-admin CONF_DIR export QUEUE DIR              each mail of QUEUE as DIR/&lt;n&gt;.eml (read-only: fences nothing)
 * kvs-admin CONF_DIR import QUEUE DIR [--take-over] every DIR/*.eml into QUEUE (sender from Return-Path or From,
 *                                                  recipients from To, Cc): refused while a writer holds QUEUE,
 *                                                  unless --take-over (which fences that writer)
 * </pre>
 * Export and import are the paper's "program to continue sending" when no James is left: export a
 * lost node's queue, then import it into a queue a James delivers from (e.g. the spool of a namespace
 * that James adopts), or hand the .eml files to any MTA.
 */
public final class KvsAdmin {
    private KvsAdmin() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /** @return the exit status: 0 done, 1 failed, 2 bad usage */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (args.length < 2) {
            err.println("usage: kvs-admin CONF_DIR list [PREFIX] | table QUEUE | export QUEUE DIR | import QUEUE DIR [--take-over]");
            return 2;
        }
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.load(Path.of(args[0]));
        if (!configuration.replicated()) {
            err.println("kvs-admin: " + args[0] + "/" + KvsSpoolConfiguration.FILE_NAME + " sets no replication.nodes");
            return 2;
        }
        String[] rest = Arrays.copyOfRange(args, 2, args.length);
        try (ReplicatedKvsOpener opener = ReplicatedKvsOpener.start(configuration)) {
            switch (args[1]) {
                case "list" -> {
                    new QueueListing(configuration, opener).print(rest.length > 0 ? rest[0] : "", out);
                    return 0;
                }
                case "table" -> {
                    if (rest.length != 1) {
                        err.println("usage: kvs-admin CONF_DIR table QUEUE");
                        return 2;
                    }
                    if (!new QueueTable(configuration, opener).print(rest[0], out)) {
                        err.println("kvs-admin: no KVS node holds " + rest[0]);
                        return 1;
                    }
                    return 0;
                }
                case "export" -> {
                    if (rest.length != 2) {
                        err.println("usage: kvs-admin CONF_DIR export QUEUE DIR");
                        return 2;
                    }
                    out.println(new MailFiles(configuration, opener).export(rest[0], Path.of(rest[1])) + " mail(s) exported to " + rest[1]);
                    return 0;
                }
                case "import" -> {
                    if (rest.length < 2) {
                        err.println("usage: kvs-admin CONF_DIR import QUEUE DIR [--take-over]");
                        return 2;
                    }
                    boolean takeOver = rest.length > 2 && rest[2].equals("--take-over");
                    out.println(new MailFiles(configuration, opener).importInto(rest[0], Path.of(rest[1]), takeOver)
                        + " mail(s) imported into " + rest[0]);
                    return 0;
                }
                default -> {
                    err.println("kvs-admin: unknown command " + args[1] + " (list, table, export, import)");
                    return 2;
                }
            }
        } catch (IllegalStateException | IllegalArgumentException e) {
            err.println("kvs-admin: " + e.getMessage());
            return 1;
        }
    }
}
