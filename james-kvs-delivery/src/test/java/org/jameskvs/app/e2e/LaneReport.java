package org.jameskvs.app.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jameskvs.testkit.ReportChart;

/**
 * Where the lanes e2e tests write their reports: {@code lanes-<name>.md} and its chart
 * {@code lanes-<name>.png} side by side in {@code -Dlanes.report.dir} (default {@code target/}, the
 * module's when run by Maven), the markdown linking the PNG by its file name, so that both can be
 * copied together into {@code report/}.
 */
final class LaneReport {
    private LaneReport() {
    }

    static Path directory() {
        return Path.of(System.getProperty("lanes.report.dir", "target"));
    }

    /** Writes the chart, then the markdown ending with the chart's link; returns the markdown's path. */
    static Path write(String name, String markdown, ReportChart chart, String caption) throws IOException {
        Path png = chart.writePng(directory().resolve("lanes-" + name + ".png"));
        String text = markdown + (markdown.endsWith("\n") ? "" : "\n") + "\n![" + caption + "](" + png.getFileName() + ")\n";
        Path md = directory().resolve("lanes-" + name + ".md");
        Files.writeString(md, text);
        System.out.println("LaneReport: wrote " + md.toAbsolutePath() + " and " + png.toAbsolutePath());
        return md;
    }

    /**
     * The rows of {@code lanes-<name>.tsv} in the report directory with {@code row} (key first) put in
     * place of the row of the same key, or added: a figure measured at several sizes, one run each,
     * charted together. Keys in the order first measured.
     */
    static Map<String, List<Double>> accumulate(String name, String key, List<Double> row) throws IOException {
        Path tsv = directory().resolve("lanes-" + name + ".tsv");
        Map<String, List<Double>> rows = new LinkedHashMap<>();
        if (Files.exists(tsv)) {
            for (String line : Files.readAllLines(tsv)) {
                String[] fields = line.split("\t");
                List<Double> values = new ArrayList<>();
                for (int i = 1; i < fields.length; i++) {
                    values.add(Double.parseDouble(fields[i]));
                }
                rows.put(fields[0], values);
            }
        }
        rows.put(key, row);
        StringBuilder text = new StringBuilder();
        rows.forEach((k, values) -> {
            text.append(k);
            values.forEach(v -> text.append('\t').append(v));
            text.append('\n');
        });
        Files.createDirectories(directory());
        Files.writeString(tsv, text);
        return rows;
    }
}
