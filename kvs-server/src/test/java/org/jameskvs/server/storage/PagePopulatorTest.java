package org.jameskvs.server.storage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** Populating a shared file mapping ahead of the writer prepares pages and never changes the file. */
class PagePopulatorTest {
    @TempDir
    Path dir;

    @Test
    void populatingWrittenAndUnwrittenPagesLeavesTheFileAsItWas() throws IOException {
        Path file = dir.resolve("journal");
        int size = 1 << 20;
        byte[] written = new byte[100_000];
        Arrays.fill(written, (byte) 7);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(written), 0);
            ch.truncate(size);
            ch.write(ByteBuffer.wrap(new byte[1]), size - 1);
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            long address = io.netty.util.internal.PlatformDependent.directBufferAddress(map);
            PagePopulator populator = PagePopulator.create();
            // a real kernel and binding populate; elsewhere it reports that it does not, and changes nothing either
            assertThat(populator.adviseRandom(address, size)).as("MADV_RANDOM on the writer's mapping")
                    .isEqualTo(populator.works());
            boolean done = populator.populate(address, size);
            assertThat(done).isEqualTo(populator.works());
            map.put(200_000, (byte) 9); // the writer's store into a populated page
            map.force();
        }
        byte[] all = Files.readAllBytes(file);
        assertThat(Arrays.copyOfRange(all, 0, written.length)).isEqualTo(written);
        byte[] expectedRest = new byte[size - written.length];
        expectedRest[200_000 - written.length] = 9;
        assertThat(Arrays.copyOfRange(all, written.length, size)).isEqualTo(expectedRest);
    }

    /** The page warmer's read path: a read-only mapping of a sparse file, populated step by step, changes nothing. */
    @Test
    void populatingAHoleForReadingLeavesTheFileAsItWas() throws IOException {
        Path file = dir.resolve("journal");
        int size = 4 << 20;
        byte[] written = new byte[100_000];
        Arrays.fill(written, (byte) 7);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(written), 0);
            ch.write(ByteBuffer.wrap(new byte[] {5}), size - 1); // the rest a hole
        }
        PagePopulator populator = PagePopulator.create();
        int[] steps = {0};
        boolean done = populator.populateRead(file, 0, size, 256 << 10, () -> ++steps[0] > 1_000);
        assertThat(done).as("a real kernel and binding populate").isEqualTo(populator.works());
        if (done) {
            assertThat(steps[0]).as("one stop check per step of 256 KiB").isEqualTo(16);
        }
        assertThat(populator.populateRead(file, 100, 4096, 4096, () -> false)).as("unaligned offset").isFalse();
        byte[] all = Files.readAllBytes(file);
        assertThat(all).hasSize(size);
        assertThat(Arrays.copyOfRange(all, 0, written.length)).isEqualTo(written);
        byte[] expectedRest = new byte[size - written.length];
        expectedRest[expectedRest.length - 1] = 5;
        assertThat(Arrays.copyOfRange(all, written.length, size)).isEqualTo(expectedRest);
        assertThat(PagePopulator.none().populateRead(file, 0, 4096, 4096, () -> false)).isFalse();
    }

    @Test
    void aDisabledPopulatorNeverPopulates() {
        PagePopulator none = PagePopulator.none();
        assertThat(none.works()).isFalse();
        assertThat(none.populate(4096, 4096)).isFalse();
    }
}
