package org.jameskvs.testkit.james;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Requests to James's webadmin on 127.0.0.1. */
public final class WebAdmin {
    private static final Pattern SIZE = Pattern.compile("\"size\":(\\d+)");
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;

    public WebAdmin(int port) {
        this.port = port;
    }

    /** The body of a GET that answered 200; anything else throws. */
    public String get(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .GET()
            .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("GET " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    /** A GET whatever its status (e.g. /healthcheck, which answers 503 when a check is unhealthy). */
    public HttpResponse<String> getAnyStatus(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .GET()
            .build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** The body of a PATCH that answered 2xx; anything else throws. */
    public String patch(String path, String json) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .method("PATCH", HttpRequest.BodyPublishers.ofString(json))
            .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException("PATCH " + path + " answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    /** The {@code size} webadmin reports for a mail queue. */
    public long queueSize(String queue) throws IOException, InterruptedException {
        Matcher size = SIZE.matcher(get("/mailQueues/" + queue));
        if (!size.find()) {
            throw new IOException("no size for mail queue " + queue);
        }
        return Long.parseLong(size.group(1));
    }
}
