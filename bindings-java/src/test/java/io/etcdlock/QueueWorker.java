package io.etcdlock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A child JVM for TaskQueueTest: claims one task of queue args[1] (TTL args[2] s), prints
 * "claimed <id> <attempts>", waits for a line on stdin, then writes {@code <name>-result} =
 * "first" fenced and acks, printing "acked" or "not held".
 */
public final class QueueWorker {
    private QueueWorker() {}

    public static void main(String[] args) throws Exception {
        EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder().endpoints(args[0].split(",")).build());
        TaskQueue q = client.queue(args[1], QueueOptions.ttl(Duration.ofSeconds(Long.parseLong(args[2]))).worker("child".getBytes(StandardCharsets.UTF_8)));
        Task task = q.claim(Duration.ofSeconds(10));
        System.out.println("claimed " + task.id() + " " + task.attempts());
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        try {
            task.putIfHeld(args[1] + "-result", "first".getBytes(StandardCharsets.UTF_8));
            task.ack();
            System.out.println("acked");
        } catch (NotHeldException e) {
            System.out.println("not held");
        }
        System.out.flush();
        client.close();
    }
}
