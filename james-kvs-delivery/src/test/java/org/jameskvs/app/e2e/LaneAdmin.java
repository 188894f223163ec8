package org.jameskvs.app.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** The /lanes webadmin route from a test: GET, PUT and DELETE, JSON parsed. */
final class LaneAdmin {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;

    LaneAdmin(int port) {
        this.port = port;
    }

    JsonNode lanes() throws IOException, InterruptedException {
        return send("GET", "/lanes", 200);
    }

    JsonNode lane(String laneOrDomain) throws IOException, InterruptedException {
        return send("GET", "/lanes/" + laneOrDomain, 200);
    }

    JsonNode suspend(String laneOrDomain, String duration) throws IOException, InterruptedException {
        return send("PUT", "/lanes/" + laneOrDomain + "/suspension?duration=" + duration, 200);
    }

    JsonNode resume(String laneOrDomain) throws IOException, InterruptedException {
        return send("DELETE", "/lanes/" + laneOrDomain + "/suspension", 200);
    }

    JsonNode send(String method, String path) throws IOException, InterruptedException {
        return send(method, path, 200);
    }

    int status(String method, String path) throws IOException, InterruptedException {
        return request(method, path).statusCode();
    }

    private JsonNode send(String method, String path, int expected) throws IOException, InterruptedException {
        HttpResponse<String> response = request(method, path);
        if (response.statusCode() != expected) {
            throw new IOException(method + " " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }

    private HttpResponse<String> request(String method, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
