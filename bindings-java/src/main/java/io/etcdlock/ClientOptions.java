package io.etcdlock;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How {@link EtcdLockClient#connect} connects: endpoints, timeouts, credentials, TLS.
 *
 * <pre>{@code
 * ClientOptions.builder()
 *     .endpoints("http://127.0.0.1:2379")
 *     .timeout(Duration.ofSeconds(5))
 *     .build();
 * }</pre>
 */
public final class ClientOptions {
    final String[] endpoints;
    final Duration connectTimeout;
    final Duration requestTimeout;
    final String user;
    final String password;
    final Path caFile;
    final Path certFile;
    final Path keyFile;
    final String caPem;
    final String certPem;
    final String keyPem;
    final String serverName;
    final String name;

    private ClientOptions(Builder b) {
        this.endpoints = b.endpoints.toArray(new String[0]);
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.user = b.user;
        this.password = b.password;
        this.caFile = b.caFile;
        this.certFile = b.certFile;
        this.keyFile = b.keyFile;
        this.caPem = b.caPem;
        this.certPem = b.certPem;
        this.keyPem = b.keyPem;
        this.serverName = b.serverName;
        this.name = b.name;
    }

    /** @return a builder with the defaults: 5 s timeouts, no credentials, no TLS */
    public static Builder builder() {
        return new Builder();
    }

    /** The password and PEM text never appear here (PEM files by path do). */
    @Override
    public String toString() {
        String tls = "";
        if (caFile != null || certFile != null) {
            tls = " tls=files(ca=" + caFile + ", cert=" + certFile + ")";
        } else if (caPem != null || certPem != null) {
            tls = " tls=pem(ca " + (caPem != null ? "given" : "system roots") + ", client certificate "
                    + (certPem != null ? "given" : "none") + ")";
        }
        return "ClientOptions" + List.of(endpoints) + (user != null ? " user=" + user : "") + tls
                + (serverName != null ? " serverName=" + serverName : "") + (name != null ? " name=" + name : "");
    }

    /** Builds {@link ClientOptions}. Not thread-safe. */
    public static final class Builder {
        private final List<String> endpoints = new ArrayList<>();
        private Duration connectTimeout;
        private Duration requestTimeout;
        private String user;
        private String password;
        private Path caFile;
        private Path certFile;
        private Path keyFile;
        private String caPem;
        private String certPem;
        private String keyPem;
        private String serverName;
        private String name;

        private Builder() {}

        /**
         * Adds endpoints: {@code http://host:port} ({@code host:port} works too), or
         * {@code https://host:port} for TLS; all of one scheme.
         *
         * @param endpoints one or more endpoint URLs
         * @return this builder
         */
        public Builder endpoints(String... endpoints) {
            for (String e : Objects.requireNonNull(endpoints, "endpoints")) {
                this.endpoints.add(Objects.requireNonNull(e, "endpoint"));
            }
            return this;
        }

        /**
         * @param endpoints endpoint URLs, as {@link #endpoints(String...)}
         * @return this builder
         */
        public Builder endpoints(List<String> endpoints) {
            return endpoints(Objects.requireNonNull(endpoints, "endpoints").toArray(new String[0]));
        }

        /**
         * Bounds both the first connection and each request (retries included).
         *
         * @param timeout a positive duration
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            return connectTimeout(timeout).requestTimeout(timeout);
        }

        /**
         * @param timeout bound on the first connection and its probe (default 5 s)
         * @return this builder
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connect timeout");
            return this;
        }

        /**
         * @param timeout bound on each request, retries included (default 5 s)
         * @return this builder
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "request timeout");
            return this;
        }

        /**
         * For etcd with authentication enabled.
         *
         * @param user the user name
         * @param password its password (never shown in messages)
         * @return this builder
         */
        public Builder user(String user, String password) {
            this.user = Objects.requireNonNull(user, "user");
            this.password = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * TLS for {@code https://} endpoints, from PEM files.
         *
         * @param ca the CA certificates that sign the members' certificates (null: the system's roots)
         * @param cert this client's certificate chain, for members that require one (mTLS), or null
         * @param key the private key of {@code cert}, or null (given with {@code cert})
         * @return this builder
         */
        public Builder tls(Path ca, Path cert, Path key) {
            if ((cert == null) != (key == null)) {
                throw new IllegalArgumentException("a client certificate and its key are given together");
            }
            this.caFile = ca;
            this.certFile = cert;
            this.keyFile = key;
            this.caPem = this.certPem = this.keyPem = null; // replaces an earlier tlsPem
            return this;
        }

        /**
         * TLS for {@code https://} endpoints, from PEM text held in memory (from a secret store,
         * say) instead of files. Replaces an earlier {@link #tls(Path, Path, Path)}. The text is
         * checked when connecting ({@link IllegalArgumentException} naming the option, never
         * showing the text) and appears in no message and no {@code toString()}.
         *
         * @param ca PEM text of the CA certificates that sign the members' certificates (one or
         *     more concatenated), or null for the system's roots
         * @param cert PEM text of this client's certificate chain, for members that require one
         *     (mTLS), or null
         * @param key PEM text of the private key of {@code cert}, or null (given with {@code cert})
         * @return this builder
         */
        public Builder tlsPem(String ca, String cert, String key) {
            if ((cert == null) != (key == null)) {
                throw new IllegalArgumentException("a client certificate and its key are given together");
            }
            this.caPem = ca;
            this.certPem = cert;
            this.keyPem = key;
            this.caFile = this.certFile = this.keyFile = null; // replaces an earlier tls
            return this;
        }

        /**
         * The name to check in the members' certificates instead of each endpoint's host: for
         * endpoints given by IP address whose certificates name a DNS name. Sent as SNI when it
         * is a DNS name. Turns TLS on (with the system's roots unless a CA is given).
         *
         * @param serverName a DNS name or an IP address
         * @return this builder
         */
        public Builder serverName(String serverName) {
            Objects.requireNonNull(serverName, "serverName");
            if (serverName.isEmpty()) {
                throw new IllegalArgumentException("serverName must not be empty");
            }
            this.serverName = serverName;
            return this;
        }

        /**
         * The client's name: the {@code client} tag (label) of its metrics, so that two clients
         * in one process, or one registry, never share a series. Without it the client is named
         * {@code etcdlock-<n>}, unique in the process ({@link EtcdLockClient#name()}).
         *
         * @param name any non-empty text
         * @return this builder
         * @throws IllegalArgumentException if empty
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isEmpty()) {
                throw new IllegalArgumentException("the client name must not be empty");
            }
            this.name = name;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException without endpoints
         */
        public ClientOptions build() {
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("at least one endpoint is needed");
            }
            return new ClientOptions(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }
    }
}
