package io.etcdlock;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP proxy in front of the test etcd whose path can be cut: {@link #cut()} closes every
 * connection through it and, until {@link #restore()}, each new one at once, so a client
 * connected through it hears nothing while others write (the core's tests do this with
 * tests/testkit's Proxy, the C tests with bindings-c/tests/cutproxy.h). Daemon threads.
 */
final class CutProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    /** Guarded by this. */
    private boolean cut;
    /** Both ends of every proxied connection. Guarded by this. */
    private final List<Socket> sockets = new ArrayList<>();

    /** Forwards a free port on 127.0.0.1 to the first member of {@code endpoints}. */
    CutProxy(String endpoints) throws IOException {
        String first = endpoints.split(",")[0];
        this.target = Integer.parseInt(first.substring(first.lastIndexOf(':') + 1));
        this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "cut-proxy");
        t.setDaemon(true);
        t.start();
    }

    String endpoint() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** Closes every connection (nothing passes once this returns), and each new one until restore. */
    synchronized void cut() {
        cut = true;
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    synchronized void restore() {
        cut = false;
    }

    @Override
    public void close() throws IOException {
        server.close();
        cut();
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException closed) {
                return;
            }
            synchronized (this) {
                Socket up = null;
                if (!cut) {
                    try {
                        up = new Socket(InetAddress.getLoopbackAddress(), target);
                        client.setTcpNoDelay(true);
                        up.setTcpNoDelay(true);
                    } catch (IOException e) {
                        closeQuietly(up);
                        up = null;
                    }
                }
                if (up == null) {
                    closeQuietly(client); // cut: closed at once
                    continue;
                }
                sockets.add(client);
                sockets.add(up);
                pump(client, up);
                pump(up, client);
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[65536];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException gone) {
                // one end closed (or cut): both go
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "cut-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        if (s == null) {
            return;
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
