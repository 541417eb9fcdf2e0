package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcdlock.examples.Example;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The README's example (examples/io/etcdlock/examples/Example.java) runs to its end. */
class ExampleTest {
    @Test
    void exampleRuns() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            Example.main(new String[] {Etcd.endpoints()});
        } finally {
            System.setOut(out);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertTrue(text.contains("held with fencing token "), text);
        assertTrue(text.endsWith("done\n"), text);
    }
}
