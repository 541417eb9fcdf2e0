package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcdlock.examples.LockSetExample;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The README's lock set example (examples/io/etcdlock/examples/LockSetExample.java) runs to its end, and the README shows it as it is. */
class LockSetExampleTest {
    @Test
    void lockSetExampleRuns() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            LockSetExample.main(new String[] {Etcd.endpoints()});
        } finally {
            System.setOut(out);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertTrue(text.startsWith("holding 2 names, token "), text);
        assertTrue(text.contains("\nfence holds: true\njob running with [example/cfg-"), text);
        assertTrue(text.endsWith("done\n"), text);
    }

    /** Every line of the README's lock set block is a line of the example, in order. */
    @Test
    void theReadmeShowsTheExample() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("```java\n", readme.indexOf("## Lock sets"));
        assertTrue(start > 0, "no java block in the README's lock sets section");
        List<String> block = readme.substring(start + 8, readme.indexOf("```\n", start + 8)).lines().map(String::strip)
                .filter(l -> !l.isEmpty()).collect(Collectors.toList());
        List<String> example = Files.readAllLines(Path.of("examples/io/etcdlock/examples/LockSetExample.java")).stream().map(String::strip)
                .collect(Collectors.toList());
        int at = 0;
        for (String line : block) {
            while (at < example.size() && !example.get(at).equals(line)) {
                at++;
            }
            assertTrue(at < example.size(), "the README's line is not in LockSetExample.java (in order): " + line);
            at++;
        }
    }
}
