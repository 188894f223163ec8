package org.jameskvs.testkit;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * A PNG chart of a report's figure, from labelled series: bars (a value per series and category) or
 * lines (x, y points per series). Written headless ({@code java.awt.headless=true}, set here when the
 * caller has not set it): the tests that write reports run without a display. JFreeChart is a
 * {@code provided} dependency of the test kit: a module that calls this declares it (scope test).
 * <pre>
 * ReportChart.bars("Isolation", null, "ratio to baseline")
 *     .bar("mails/s", "heavy-421", 1.09).bar("p99", "heavy-421", 0.26)
 *     .writePng(Path.of("target/lanes-isolation.png"));
 * </pre>
 */
public final class ReportChart {
    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    public static final int WIDTH = 900;
    public static final int HEIGHT = 500;
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
        new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b)};

    private enum Kind { BARS, LINES }

    private record Bar(String series, String category, double value) {
    }

    private final Kind kind;
    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<Bar> bars = new ArrayList<>();
    private final Map<String, List<double[]>> lines = new LinkedHashMap<>();

    private ReportChart(Kind kind, String title, String xLabel, String yLabel) {
        this.kind = kind;
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    /** A bar chart: categories along the x axis, one bar per series in each (axis labels may be null). */
    public static ReportChart bars(String title, String categoryLabel, String valueLabel) {
        return new ReportChart(Kind.BARS, title, categoryLabel, valueLabel);
    }

    /** A line chart: one line per series through its points, in the order added. */
    public static ReportChart lines(String title, String xLabel, String yLabel) {
        return new ReportChart(Kind.LINES, title, xLabel, yLabel);
    }

    /** Adds the bar of {@code series} in {@code category} (a bar chart's). */
    public ReportChart bar(String series, String category, double value) {
        if (kind != Kind.BARS) {
            throw new IllegalStateException("a line chart takes points, not bars");
        }
        bars.add(new Bar(series, category, value));
        return this;
    }

    /** Adds a point to the line of {@code series} (a line chart's). */
    public ReportChart point(String series, double x, double y) {
        if (kind != Kind.LINES) {
            throw new IllegalStateException("a bar chart takes bars, not points");
        }
        lines.computeIfAbsent(series, s -> new ArrayList<>()).add(new double[] {x, y});
        return this;
    }

    /** Writes the chart to {@code file} (WIDTH x HEIGHT), creating its directory; returns {@code file}. */
    public Path writePng(Path file) throws IOException {
        return writePng(file, WIDTH, HEIGHT);
    }

    public Path writePng(Path file, int width, int height) throws IOException {
        if (bars.isEmpty() && lines.isEmpty()) {
            throw new IllegalStateException("nothing to chart: " + title);
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ChartUtils.saveChartAsPNG(file.toFile(), kind == Kind.BARS ? barChart() : lineChart(), width, height);
        return file;
    }

    private JFreeChart barChart() {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        bars.forEach(b -> data.addValue(b.value(), b.series(), b.category()));
        JFreeChart chart = ChartFactory.createBarChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
        style(chart);
        CategoryPlot plot = chart.getCategoryPlot();
        BarRenderer renderer = (BarRenderer) plot.getRenderer();
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        for (int i = 0; i < data.getRowCount(); i++) {
            renderer.setSeriesPaint(i, COLORS[i % COLORS.length]);
        }
        // the figure itself on each bar: the chart is read for its numbers, not only its shape
        renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", new java.text.DecimalFormat("#,##0.##")));
        renderer.setDefaultItemLabelsVisible(true);
        renderer.setDefaultItemLabelFont(new Font("SansSerif", Font.PLAIN, 11));
        renderer.setItemMargin(0.05);
        plot.getDomainAxis().setMaximumCategoryLabelLines(3);
        return chart;
    }

    private JFreeChart lineChart() {
        XYSeriesCollection data = new XYSeriesCollection();
        lines.forEach((name, points) -> {
            XYSeries series = new XYSeries(name, false, true);
            points.forEach(p -> series.add(p[0], p[1]));
            data.addSeries(series);
        });
        JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
        style(chart);
        XYPlot plot = chart.getXYPlot();
        // points drawn only where a line has few: a time series of thousands would be a smear of shapes
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesPaint(i, COLORS[i % COLORS.length]);
            renderer.setSeriesStroke(i, new BasicStroke(2f));
            renderer.setSeriesShapesVisible(i, data.getItemCount(i) <= 50);
        }
        plot.setRenderer(renderer);
        plot.setSeriesRenderingOrder(org.jfree.chart.plot.SeriesRenderingOrder.FORWARD); // a limit line added last stays visible
        return chart;
    }

    private static void style(JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font("SansSerif", Font.BOLD, 15));
        chart.getPlot().setBackgroundPaint(Color.WHITE);
        if (chart.getPlot() instanceof CategoryPlot plot) {
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        } else if (chart.getPlot() instanceof XYPlot plot) {
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
            plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        }
    }
}
