package org.jameskvs.james;

import java.util.List;
import java.util.function.Predicate;

import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

/**
 * The log lines one class writes during a test (logback, the binding of this module's tests: James's
 * testing-base brings it). Fails at once if another binding is active, rather than seeing nothing.
 */
public final class CapturedLog implements AutoCloseable {
    private final Logger logger;
    private final Level levelBefore;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private CapturedLog(Logger logger) {
        this.logger = logger;
        this.levelBefore = logger.getLevel();
        // INFO and above reach the appender whatever the test configuration's root level.
        logger.setLevel(Level.INFO);
        appender.start();
        logger.addAppender(appender);
    }

    public static CapturedLog of(Class<?> source) {
        org.slf4j.Logger logger = LoggerFactory.getLogger(source);
        if (!(logger instanceof Logger logback)) {
            throw new IllegalStateException("tests expect logback as the SLF4J binding, found " + logger.getClass());
        }
        return new CapturedLog(logback);
    }

    /** Formatted messages at {@code level} matching {@code filter}, in order. */
    public List<String> messages(Level level, Predicate<String> filter) {
        synchronized (appender) { // the lock AppenderBase.doAppend holds while it adds
            return appender.list.stream().filter(event -> event.getLevel() == level)
                .map(ILoggingEvent::getFormattedMessage).filter(filter).toList();
        }
    }

    public List<String> messages(Level level) {
        return messages(level, any -> true);
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setLevel(levelBefore);
    }
}
