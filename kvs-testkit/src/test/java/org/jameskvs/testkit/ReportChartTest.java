package org.jameskvs.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Path;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A chart written headless is a PNG of the asked size with something drawn on it (not one colour). */
class ReportChartTest {

    @Test
    void aBarChartIsAPngOfTheAskedSizeWithSomethingDrawn(@TempDir Path dir) throws Exception {
        Path png = ReportChart.bars("ratios", null, "ratio").bar("mails/s", "421", 1.09).bar("p99", "421", 0.26)
            .bar("mails/s", "stall", 1.23).bar("p99", "stall", 1.15).writePng(dir.resolve("sub/bars.png"), 640, 360);
        assertDrawn(png, 640, 360);
    }

    @Test
    void aLineChartIsAPngOfTheAskedSizeWithSomethingDrawn(@TempDir Path dir) throws Exception {
        ReportChart chart = ReportChart.lines("over time", "s", "connections");
        for (int i = 0; i < 100; i++) {
            chart.point("open", i, i % 4).point("limit", i, 3);
        }
        assertDrawn(chart.writePng(dir.resolve("lines.png")), ReportChart.WIDTH, ReportChart.HEIGHT);
    }

    private static void assertDrawn(Path png, int width, int height) throws Exception {
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image).as("decodable PNG").isNotNull();
        assertThat(image.getWidth()).isEqualTo(width);
        assertThat(image.getHeight()).isEqualTo(height);
        int first = image.getRGB(0, 0);
        long differing = 0;
        for (int y = 0; y < height; y += 2) {
            for (int x = 0; x < width; x += 2) {
                if (image.getRGB(x, y) != first) {
                    differing++;
                }
            }
        }
        assertThat(differing).as("pixels drawn in another colour than the background").isGreaterThan(1000);
        long coloured = 0; // a bar or line in the series colours, not only black text on white
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                int rgb = image.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    coloured++;
                }
            }
        }
        assertThat(coloured).as("pixels in a series colour").isGreaterThan(100);
    }
}
