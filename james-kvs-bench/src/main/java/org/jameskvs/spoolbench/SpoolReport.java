package org.jameskvs.spoolbench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Turns {@link SpoolBench}'s results file into {@code README.md}, {@code throughput.png} and
 * {@code latency-vs-load.png} in the output folder, and prints the tables.
 *
 * <p>{@code SpoolBench report --results FILE --meta FILE --out DIR}. With several James starts
 * (several records per system and phase), every number is the median over the starts.
 */
final class SpoolReport {
    private static final List<String> ORDER = List.of("memory", "activemq", "kvs", "kvs-lanes", "postfix");

    private final List<Map<String, String>> records = new ArrayList<>();
    private final Map<String, String> meta = new LinkedHashMap<>();
    private final Map<String, String> labels = new LinkedHashMap<>();

    private SpoolReport() {
    }

    static void main(Map<String, String> opts) throws IOException {
        SpoolReport report = new SpoolReport();
        for (String line : Files.readAllLines(Path.of(opts.get("results")), StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, String> r = new LinkedHashMap<>();
            for (String f : line.split("\t")) {
                int eq = f.indexOf('=');
                if (eq > 0) {
                    r.put(f.substring(0, eq), f.substring(eq + 1));
                }
            }
            report.records.add(r);
            report.labels.putIfAbsent(r.get("system"), r.get("label"));
        }
        if (opts.containsKey("meta")) {
            for (String line : Files.readAllLines(Path.of(opts.get("meta")), StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    report.meta.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        }
        Path out = Path.of(opts.getOrDefault("out", "."));
        Files.createDirectories(out);
        String markdown = report.markdown();
        Files.writeString(out.resolve("README.md"), markdown, StandardCharsets.UTF_8);
        report.throughputChart(out.resolve("throughput.png"));
        report.latencyChart(out.resolve("latency-vs-load.png"));
        System.out.println(markdown);
    }

    // ---------------------------------------------------------------------------------------------
    private List<String> systems() {
        TreeSet<String> present = records.stream().map(r -> r.get("system"))
            .collect(Collectors.toCollection(TreeSet::new));
        List<String> ordered = new ArrayList<>();
        ORDER.stream().filter(present::contains).forEach(ordered::add);
        present.stream().filter(s -> !ORDER.contains(s)).forEach(ordered::add);
        return ordered;
    }

    private List<Map<String, String>> select(String system, String phase) {
        return records.stream().filter(r -> system.equals(r.get("system")) && phase.equals(r.get("phase")))
            .collect(Collectors.toList());
    }

    /** Median over the starts of a numeric field; NaN when absent. */
    private static double median(List<Map<String, String>> rs, String field) {
        double[] v = rs.stream().map(r -> r.get(field)).filter(s -> s != null && !s.equals("NaN"))
            .mapToDouble(Double::parseDouble).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private double max(String system, String field) {
        return median(select(system, "max"), field);
    }

    private double end(String system, String field) {
        return median(select(system, "end"), field);
    }

    private static String f0(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String f1(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%,.1f", v);
    }

    private static String f2(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }

    private String label(String system) {
        return labels.getOrDefault(system, system);
    }

    /** The CPU fields (cpu.name) recorded for a system's max phase, in recorded order. */
    private List<String> cpuFields(String system) {
        List<String> fields = new ArrayList<>();
        for (Map<String, String> r : select(system, "max")) {
            r.keySet().stream().filter(k -> k.startsWith("cpu.") && !fields.contains(k)).forEach(fields::add);
        }
        return fields;
    }

    private String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Spool benchmark: James + KVS spool vs in-memory queue, ActiveMQ, Postfix\n\n");
        md.append("Produced by `").append(meta.getOrDefault("command", "bin/benchmark")).append("` on ")
            .append(meta.getOrDefault("date", "?")).append(meta.getOrDefault("quick", "false").equals("true")
                ? " (**quick mode**: a smoke run; short phases, small warm-up; the numbers are indicative only)" : "")
            .append(".\n\n");
        md.append("Same load for every system: ").append(meta.getOrDefault("sessions", "20"))
            .append(" concurrent SMTP sessions on 127.0.0.1, ").append(mixText(meta)).append(" mails, one recipient, relayed to an SMTP sink ")
            .append("(`org.jameskvs.testkit.smtp.SmtpSink`, a separate process) standing for the next hop.\n\n");

        md.append("## Throughput and response time at max load\n\n");
        md.append("Sessions send back to back for ").append(meta.getOrDefault("seconds", "?")).append(" s after a warm-up of ")
            .append(meta.getOrDefault("warmup", "?")).append(" mails (Postfix: ").append(meta.getOrDefault("warmup_postfix", "?"))
            .append(")").append(starts() > 1 ? "; median over " + starts() + " starts" : "").append(".\n\n");
        md.append("| system | accepted mails/s | delivered mails/s (end to end) | avg response ms | p99 response ms | errors / non-250 |\n");
        md.append("|---|---:|---:|---:|---:|---:|\n");
        for (String s : systems()) {
            md.append("| ").append(label(s)).append(" | ").append(f1(max(s, "accepted_per_s"))).append(" | ")
                .append(f1(max(s, "delivered_per_s"))).append(deliveredNote(s)).append(" | ")
                .append(f2(max(s, "avg_ms"))).append(" | ").append(f2(max(s, "p99_ms"))).append(" | ")
                .append(f0(max(s, "errors"))).append(" / ").append(f0(max(s, "rejected"))).append(" |\n");
        }
        md.append("\n![throughput per system](throughput.png)\n\n");

        md.append("## CPU seconds per process during the max phase\n\n");
        md.append("From `/proc/<pid>/stat` (utime+stime, plus reaped and live children: for Postfix the master and all its daemons), ")
            .append("over the max phase from the first mail sent until the last accepted mail reached the sink. ")
            .append("`loadgen` is the load generator (this benchmark's sender); it shares the machine's cores with the servers. ")
            .append("CPU stolen: the seconds the host ran something else while this machine's vCPUs wanted to run ")
            .append("(`steal` in `/proc/stat`, whole machine, over the same phase): where it is not near 0 the phase ran on a slower machine.\n\n");
        md.append("| system | CPU s per process | server-side CPU ms per mail | CPU stolen by the host, s |\n|---|---|---:|---:|\n");
        for (String s : systems()) {
            List<String> parts = new ArrayList<>();
            double server = 0;
            for (String f : cpuFields(s)) {
                double v = max(s, f);
                String name = f.substring(4);
                parts.add(name + " " + f1(v));
                if (!name.equals("loadgen") && !name.equals("sink") && !Double.isNaN(v)) {
                    server += v;
                }
            }
            double mails = max(s, "accepted");
            md.append("| ").append(label(s)).append(" | ").append(String.join(", ", parts)).append(" | ")
                .append(mails > 0 ? f2(server * 1000 / mails) : "n/a").append(" | ").append(f1(max(s, "steal_s"))).append(" |\n");
        }

        md.append("\n## Memory of the mail server at the end\n\n");
        md.append("James's heap from `jcmd GC.heap_info` at the end of the run (used, then used right after a `jcmd GC.run` full GC; committed), the bytes of live objects from `jcmd GC.class_histogram` (after its own full GC; the heap_info figure after a GC also counts the TLABs threads took since, so it grows with the number of allocating threads), RSS from `/proc/<pid>/status`. ")
            .append("Every James runs with the same `").append(meta.getOrDefault("james_opts", "-Xmx1g")).append("`. ")
            .append("KVS nodes and the sink are separate processes (their RSS is listed apart). Postfix is left out: it is many processes, most short-lived.\n\n");
        md.append("| system | heap used MB | heap used after GC MB | live objects MB | heap committed MB | RSS MB | peak RSS MB | other processes RSS MB |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---|\n");
        for (String s : systems()) {
            if (s.equals("postfix")) {
                continue;
            }
            List<String> other = new ArrayList<>();
            for (Map<String, String> r : select(s, "end").stream().limit(1).toList()) {
                r.keySet().stream().filter(k -> k.startsWith("rss.") && !k.equals("rss.james"))
                    .forEach(k -> other.add(k.substring(4) + " " + f0(end(s, k))));
            }
            md.append("| ").append(label(s)).append(" | ").append(f0(end(s, "heap_used_mb"))).append(" | ")
                .append(f0(end(s, "heap_live_mb"))).append(" | ").append(f1(end(s, "heap_objects_mb"))).append(" | ")
                .append(f0(end(s, "heap_committed_mb"))).append(" | ")
                .append(f0(end(s, "rss_mb"))).append(" | ").append(f0(end(s, "rss_peak_mb"))).append(" | ")
                .append(String.join(", ", other)).append(" |\n");
        }

        md.append("\n## Response time vs offered load\n\n");
        md.append("Open loop: each of the sessions sends on a fixed schedule, so that together they offer the given fraction of the system's measured max accepted rate, for ")
            .append(meta.getOrDefault("sweep_seconds", "?")).append(" s per point").append(sweepNote()).append(".\n\n");
        md.append("| system | % of max | offered mails/s | accepted mails/s | avg ms | p50 ms | p99 ms |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (String s : systems()) {
            for (Map.Entry<Double, List<Map<String, String>>> e : sweep(s).entrySet()) {
                List<Map<String, String>> rs = e.getValue();
                md.append("| ").append(label(s)).append(" | ").append(f0(e.getKey() * 100)).append(" | ")
                    .append(f1(median(rs, "offered_per_s"))).append(" | ").append(f1(median(rs, "accepted_per_s")))
                    .append(" | ").append(f2(median(rs, "avg_ms"))).append(" | ").append(f2(median(rs, "p50_ms")))
                    .append(" | ").append(f2(median(rs, "p99_ms"))).append(" |\n");
            }
        }
        md.append("\n![response time vs offered load](latency-vs-load.png)\n\n");

        md.append("## Against the targets\n\n");
        md.append("Computed, not asserted (the design's targets; see the notes on this machine below).\n\n");
        md.append("| target | measured | met |\n|---|---|---|\n");
        double kvs = max("kvs", "accepted_per_s");
        double mem = max("memory", "accepted_per_s");
        double amq = max("activemq", "accepted_per_s");
        double kvsD = max("kvs", "delivered_per_s");
        double memD = max("memory", "delivered_per_s");
        double amqD = max("activemq", "delivered_per_s");
        target(md, "KVS ≥ 0.9 × in-memory (accepted mails/s)", kvs / mem, 0.9, "×");
        target(md, "KVS ≥ 0.9 × in-memory (delivered mails/s)", kvsD / memD, 0.9, "×");
        target(md, "KVS ≥ 3 × ActiveMQ (accepted mails/s)", kvs / amq, 3, "×");
        target(md, "KVS ≥ 3 × ActiveMQ (delivered mails/s)", kvsD / amqD, 3, "×");
        double at80 = sweepAt("kvs", 0.8, "avg_ms");
        md.append("| KVS: avg SMTP response ≤ 14 ms at 80 % of max | ").append(f2(at80)).append(" ms | ")
            .append(Double.isNaN(at80) ? "n/a" : at80 <= 14 ? "yes" : "no").append(" |\n");
        double mem80 = sweepAt("memory", 0.8, "avg_ms");
        md.append("| (in-memory: avg at 80 % of max, for comparison) | ").append(f2(mem80)).append(" ms | |\n");
        double heapK = end("kvs", "heap_objects_mb");
        double heapM = end("memory", "heap_objects_mb");
        md.append("| heap with the plug-in ≤ heap with the in-memory queue (live objects after a full GC) | ").append(f1(heapK)).append(" MB vs ")
            .append(f1(heapM)).append(" MB (").append(f2(heapK / heapM)).append(" ×) | ")
            .append(Double.isNaN(heapK / heapM) ? "n/a" : heapK <= heapM ? "yes" : "no").append(" |\n");
        double rssK = end("kvs", "rss_mb");
        double rssM = end("memory", "rss_mb");
        md.append("| James RSS with the plug-in ≤ with the in-memory queue | ").append(f0(rssK)).append(" MB vs ")
            .append(f0(rssM)).append(" MB (").append(f2(rssK / rssM)).append(" ×) | ")
            .append(Double.isNaN(rssK / rssM) ? "n/a" : rssK <= rssM ? "yes" : "no").append(" |\n");
        double lanesD = max("kvs-lanes", "delivered_per_s");
        if (!Double.isNaN(lanesD)) {
            target(md, "LaneDelivery ≥ 1.3 × RemoteDelivery on the same KVS spool (delivered mails/s, kvs-lanes / kvs)", lanesD / kvsD, 1.3, "×");
        }
        double pf = max("postfix", "accepted_per_s");
        if (!Double.isNaN(pf)) {
            md.append("| (KVS vs Postfix, accepted mails/s) | ").append(f2(kvs / pf)).append(" × | |\n");
        }

        md.append("\n## Machine and settings\n\n");
        for (Map.Entry<String, String> e : meta.entrySet()) {
            if (!e.getKey().equals("note")) {
                md.append("* ").append(e.getKey()).append(": ").append(e.getValue()).append('\n');
            }
        }
        md.append("\n## Notes\n\n");
        md.append(meta.getOrDefault("note", "").replace("\\n", "\n")).append('\n');
        md.append("\nRaw results (one line per system, start and phase): [results.tsv](results.tsv).\n");
        return md.toString();
    }

    private int starts() {
        return (int) records.stream().map(r -> r.get("start")).distinct().count();
    }

    private String sweepNote() {
        return starts() > 1 ? " (run on the first start only unless the command said otherwise; medians over the starts that ran it)" : "";
    }

    private String deliveredNote(String system) {
        boolean incomplete = select(system, "max").stream().anyMatch(r -> "false".equals(r.get("delivery_complete")));
        return incomplete ? " (not all delivered within the drain limit)" : "";
    }

    private static void target(StringBuilder md, String what, double ratio, double goal, String unit) {
        md.append("| ").append(what).append(" | ").append(f2(ratio)).append(' ').append(unit).append(" | ")
            .append(Double.isNaN(ratio) ? "n/a" : ratio >= goal ? "yes" : "no").append(" |\n");
    }

    private Map<Double, List<Map<String, String>>> sweep(String system) {
        Map<Double, List<Map<String, String>>> byFraction = new TreeMap<>();
        for (Map<String, String> r : select(system, "rate")) {
            byFraction.computeIfAbsent(Double.parseDouble(r.get("fraction")), k -> new ArrayList<>()).add(r);
        }
        return byFraction;
    }

    private double sweepAt(String system, double fraction, String field) {
        for (Map.Entry<Double, List<Map<String, String>>> e : sweep(system).entrySet()) {
            if (Math.abs(e.getKey() - fraction) < 1e-6) {
                return median(e.getValue(), field);
            }
        }
        return Double.NaN;
    }

    // ---------------------------------------------------------------------------------------------
    private void throughputChart(Path file) throws IOException {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        for (String s : systems()) {
            ds.addValue(max(s, "accepted_per_s"), "accepted (250 to DATA)", label(s));
            ds.addValue(max(s, "delivered_per_s"), "delivered end to end", label(s));
        }
        JFreeChart chart = ChartFactory.createBarChart(
            "Throughput, " + meta.getOrDefault("sessions", "20") + " SMTP sessions, " + mixText(meta),
            null, "mails/s", ds, PlotOrientation.VERTICAL, true, false, false);
        style(chart);
        CategoryPlot plot = chart.getCategoryPlot();
        BarRenderer r = (BarRenderer) plot.getRenderer();
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        r.setSeriesPaint(0, new Color(0x1f77b4));
        r.setSeriesPaint(1, new Color(0xff7f0e));
        r.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", new java.text.DecimalFormat("#,##0")));
        r.setDefaultItemLabelsVisible(true);
        r.setDefaultItemLabelFont(new Font("SansSerif", Font.PLAIN, 12));
        r.setItemMargin(0.05);
        plot.getDomainAxis().setMaximumCategoryLabelLines(3);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, 1000, 560);
    }

    private void latencyChart(Path file) throws IOException {
        XYSeriesCollection ds = new XYSeriesCollection();
        Color[] colors = {new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xd62728), new Color(0x9467bd)};
        List<Color> paints = new ArrayList<>();
        List<Boolean> dashed = new ArrayList<>();
        int c = 0;
        for (String s : systems()) {
            Map<Double, List<Map<String, String>>> sweep = sweep(s);
            if (sweep.isEmpty()) {
                continue;
            }
            XYSeries avg = new XYSeries(label(s) + ": avg");
            XYSeries p99 = new XYSeries(label(s) + ": p99");
            for (List<Map<String, String>> rs : sweep.values()) {
                avg.add(median(rs, "offered_per_s"), median(rs, "avg_ms"));
                p99.add(median(rs, "offered_per_s"), median(rs, "p99_ms"));
            }
            ds.addSeries(avg);
            ds.addSeries(p99);
            Color color = colors[c++ % colors.length];
            paints.add(color);
            dashed.add(false);
            paints.add(color);
            dashed.add(true);
        }
        JFreeChart chart = ChartFactory.createXYLineChart("SMTP response time (MAIL FROM to reply after DATA) vs offered load",
            "offered load (mails/s)", "response time (ms)", ds, PlotOrientation.VERTICAL, true, false, false);
        style(chart);
        XYPlot plot = chart.getXYPlot();
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < paints.size(); i++) {
            r.setSeriesPaint(i, paints.get(i));
            r.setSeriesStroke(i, dashed.get(i)
                ? new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f)
                : new BasicStroke(2.5f));
        }
        plot.setRenderer(r);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, 1000, 560);
    }

    private static void style(JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font("SansSerif", Font.BOLD, 16));
        var plot = chart.getPlot();
        plot.setBackgroundPaint(Color.WHITE);
        if (plot instanceof CategoryPlot cp) {
            cp.setRangeGridlinePaint(Color.LIGHT_GRAY);
        } else if (plot instanceof XYPlot xp) {
            xp.setRangeGridlinePaint(Color.LIGHT_GRAY);
            xp.setDomainGridlinePaint(Color.LIGHT_GRAY);
        }
    }

    @SuppressWarnings("unused")
    private static String join(double[] v) {
        return Arrays.toString(v);
    }

    /** The mail sizes of the run, as bin/benchmark wrote them in the meta file ({@code mix=}). */
    private static String mixText(Map<String, String> meta) {
        return meta.getOrDefault("mix", "70 % 1 KB, 30 % 10 KB").replace(", ", " / ");
    }
}
