package org.jameskvs.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.apache.james.queue.api.MailQueueFactory;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.junit.jupiter.api.Test;

/**
 * The plug-in tells the enqueues that answer a client still holding the mail (fail fast: SMTP 4xx)
 * from James's own enqueues of accepted mail (wait for the store) by the class that asked the queue
 * factory for the queue ({@code intakeCallers}). A class renamed in James would silently turn SMTP's
 * enqueue into one that waits; so each default must be a class of this James (3.8.1, the app's
 * classpath) that takes a {@code MailQueueFactory}.
 */
class IntakeCallersTest {

    @Test
    void everyDefaultIntakeCallerIsAJamesClassThatAsksForAQueue() throws Exception {
        List<String> callers = Arrays.stream(KvsSpoolConfiguration.DEFAULT_INTAKE_CALLERS.split(",")).toList();
        assertThat(callers).contains("org.apache.james.smtpserver.SendMailHandler");
        for (String name : callers) {
            Class<?> caller = Class.forName(name, false, getClass().getClassLoader());
            assertThat(takesAMailQueueFactory(caller)).as("%s takes a MailQueueFactory", name).isTrue();
            assertThat(KvsSpoolConfiguration.defaults().isIntakeCaller(name)).isTrue();
        }
        assertThat(KvsSpoolConfiguration.defaults().isIntakeCaller("org.apache.james.mailetcontainer.impl.JamesMailSpooler"))
            .as("the spooler re-enqueues mail it holds alone").isFalse();
    }

    private static boolean takesAMailQueueFactory(Class<?> type) {
        Stream<Class<?>> fields = Arrays.stream(type.getDeclaredFields()).map(Field::getType);
        Stream<Class<?>> parameters = Arrays.stream(type.getDeclaredConstructors())
            .map(Constructor::getParameterTypes).flatMap(Arrays::stream);
        return Stream.concat(fields, parameters).anyMatch(MailQueueFactory.class::isAssignableFrom);
    }
}
