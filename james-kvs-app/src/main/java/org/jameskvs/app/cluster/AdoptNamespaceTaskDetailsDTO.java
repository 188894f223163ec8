package org.jameskvs.app.cluster;

import java.time.Instant;

import org.apache.james.server.task.json.dto.AdditionalInformationDTO;
import org.apache.james.server.task.json.dto.AdditionalInformationDTOModule;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The JSON of an adopt task's details ({@link AdoptNamespaceTask.Details}) in {@code GET /tasks/{id}}:
 * James's task routes show a task's details only through such a module, bound named
 * {@code webadmin-dto} ({@link KvsClusterRoutesModule}).
 */
public class AdoptNamespaceTaskDetailsDTO implements AdditionalInformationDTO {
    private final String type;
    private final String namespace;
    private final String state;
    private final long moved;
    private final String endReason;
    private final Instant timestamp;

    @JsonCreator
    public AdoptNamespaceTaskDetailsDTO(@JsonProperty("type") String type, @JsonProperty("namespace") String namespace,
                                        @JsonProperty("state") String state, @JsonProperty("moved") long moved,
                                        @JsonProperty("endReason") String endReason,
                                        @JsonProperty("timestamp") Instant timestamp) {
        this.type = type;
        this.namespace = namespace;
        this.state = state;
        this.moved = moved;
        this.endReason = endReason;
        this.timestamp = timestamp;
    }

    public static AdditionalInformationDTOModule<AdoptNamespaceTask.Details, AdoptNamespaceTaskDetailsDTO> module() {
        return new AdditionalInformationDTOModule<>(
            (details, type) -> new AdoptNamespaceTaskDetailsDTO(type, details.namespace(), details.state(), details.moved(),
                details.endReason(), details.timestamp()),
            dto -> new AdoptNamespaceTask.Details(dto.namespace, dto.state, dto.moved, dto.endReason, dto.timestamp),
            AdoptNamespaceTask.Details.class, AdoptNamespaceTaskDetailsDTO.class, AdoptNamespaceTask.TYPE.asString());
    }

    @Override
    public String getType() {
        return type;
    }

    public String getNamespace() {
        return namespace;
    }

    public String getState() {
        return state;
    }

    public long getMoved() {
        return moved;
    }

    public String getEndReason() {
        return endReason;
    }

    @Override
    public Instant getTimestamp() {
        return timestamp;
    }
}
