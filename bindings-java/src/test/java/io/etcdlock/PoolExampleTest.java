package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcdlock.examples.PoolExample;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The README's pool example (examples/io/etcdlock/examples/PoolExample.java) runs to its end, and the README shows it as it is. */
class PoolExampleTest {
    @Test
    void poolExampleRuns() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            PoolExample.main(new String[] {Etcd.endpoints()});
        } finally {
            System.setOut(out);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertTrue(text.startsWith("using gpu0, token "), text);
        assertTrue(text.contains("job-8 uses [gpu1, gpu2]\ngpu0 FREE\ngpu1 FREE\ngpu2 FREE\nworker id 0\nencoding with 2 permits"), text);
        assertTrue(text.endsWith("done\n"), text);
    }

    /** Every line of the README's pool block is a line of the example, in order. */
    @Test
    void theReadmeShowsTheExample() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("```java\n", readme.indexOf("## Pools of named slots"));
        assertTrue(start > 0, "no java block in the README's pools section");
        List<String> block = readme.substring(start + 8, readme.indexOf("```\n", start + 8)).lines().map(String::strip)
                .filter(l -> !l.isEmpty()).collect(Collectors.toList());
        List<String> example = Files.readAllLines(Path.of("examples/io/etcdlock/examples/PoolExample.java")).stream().map(String::strip)
                .collect(Collectors.toList());
        int at = 0;
        for (String line : block) {
            while (at < example.size() && !example.get(at).equals(line)) {
                at++;
            }
            assertTrue(at < example.size(), "the README's line is not in PoolExample.java (in order): " + line);
            at++;
        }
    }
}
