package org.jameskvs.app.cluster;

import org.apache.james.server.task.json.dto.AdditionalInformationDTO;
import org.apache.james.server.task.json.dto.AdditionalInformationDTOModule;
import org.apache.james.task.TaskExecutionDetails;
import org.apache.james.webadmin.Routes;

import com.google.inject.AbstractModule;
import com.google.inject.multibindings.Multibinder;
import com.google.inject.multibindings.ProvidesIntoSet;
import com.google.inject.name.Named;

/**
 * Adds the cluster routes ({@link KvsClusterRoutes}) to James's webadmin, and the JSON of the adopt
 * task's details to its task routes ({@code webadmin-dto}, as James's own route modules do).
 */
public class KvsClusterRoutesModule extends AbstractModule {
    @Override
    protected void configure() {
        Multibinder.newSetBinder(binder(), Routes.class).addBinding().to(KvsClusterRoutes.class);
    }

    @ProvidesIntoSet
    @Named("webadmin-dto")
    public AdditionalInformationDTOModule<? extends TaskExecutionDetails.AdditionalInformation, ? extends AdditionalInformationDTO>
        adoptNamespaceTaskDetails() {
        return AdoptNamespaceTaskDetailsDTO.module();
    }
}
