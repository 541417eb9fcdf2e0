package io.etcdlock.examples;

import io.etcdlock.ClientOptions;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.OnceOptions;
import io.etcdlock.OnceSlot;
import io.etcdlock.PutOptions;
import io.etcdlock.QueueOptions;
import io.etcdlock.QueueStats;
import io.etcdlock.Task;
import io.etcdlock.TaskQueue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * The README's task queue example: puts with ids and priorities, a worker that writes each
 * result fenced by its claim and acks (one task fails once and is nacked with a delay), and a job
 * run once an hour however many times it is triggered. Run it with the etcd endpoints as the first
 * argument (default http://127.0.0.1:2379).
 */
public final class QueueExample {
    public static void main(String[] args) throws Exception {
        String endpoints = args.length > 0 ? args[0] : "http://127.0.0.1:2379";
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(endpoints.split(",")).timeout(Duration.ofSeconds(5)).build())) {
            TaskQueue q = client.queue("example/resize-" + run, QueueOptions.ttl(Duration.ofSeconds(10)).maxAttempts(5));
            q.put(bytes("img-1.png"), PutOptions.defaults().id("img-1"));
            q.put(bytes("img-2.png"), PutOptions.defaults().id("img-2").priority(5)); // claimed first
            q.put(bytes("img-2.png"), PutOptions.defaults().id("img-2")); // the same id: nothing new

            // Work until nothing is pending or delayed.
            for (QueueStats s = q.stats(); s.pending() + s.delayed() > 0; s = q.stats()) {
                try (Task task = q.claim(Duration.ofSeconds(10))) { // acked at the end of the block, unless nacked
                    if (task.id().equals("img-1") && task.attempts() == 1) {
                        task.nack(Duration.ofSeconds(1)); // failed: again in a second or so
                        continue;
                    }
                    // Written only while the claim holds (NotHeldException once it is lost).
                    task.putIfHeld("example/results-" + run + "/" + task.id(), bytes("resized " + new String(task.payload(), StandardCharsets.UTF_8)));
                    System.out.println(task.id() + " done on attempt " + task.attempts());
                }
            }
            System.out.println("dead letters: " + q.dead().size() + ", pending: " + q.stats().pending());

            OnceOptions hourly = OnceOptions.every(Duration.ofHours(1));
            for (int trigger = 1; trigger <= 2; trigger++) {
                Optional<OnceSlot> won = client.once("example/report-" + run, hourly);
                if (won.isEmpty()) {
                    System.out.println("trigger " + trigger + ": this hour's report is done or running elsewhere");
                    continue;
                }
                try (OnceSlot slot = won.get()) { // marks the hour done at the end (release() if it failed)
                    System.out.println("trigger " + trigger + ": running this hour's report, token " + slot.fencingToken());
                }
            }
            client.delete("example/results-" + run + "/img-1");
            client.delete("example/results-" + run + "/img-2");
            System.out.println("done");
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
