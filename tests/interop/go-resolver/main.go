// Command go-resolver checks the service registry against etcd's own Go naming packages, as a Go
// gRPC service would use them (core/tests/integration/registry.rs runs it):
//
//  1. It starts two gRPC health servers, A and B, on 127.0.0.1 (B only without -b: with it, B is
//     the caller's own server at that address, e.g. a Python one), registers A with the
//     endpoints manager (go.etcd.io/etcd/client/v3/naming/endpoints) as <target>/go-A on a
//     lease, and prints "A <addr>" and "B <addr>".
//  2. It waits for a line on stdin: the caller has registered B as <target>/<name> with its own
//     client (etcdlock's grpc_endpoint value).
//  3. It dials etcd:///<target> through the resolver (naming/resolver) with round_robin, and
//     makes health checks until both A and B have answered one, then prints "resolved A B".
//
// Every wait is bounded; a failure is one line on stderr and exit status 1.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/naming/endpoints"
	"go.etcd.io/etcd/client/v3/naming/resolver"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-resolver: "+format+"\n", args...)
	os.Exit(1)
}

func serve() string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		die("listen: %v", err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(lis)
	return lis.Addr().String()
}

func main() {
	eps := flag.String("endpoints", "", "etcd client URLs, comma-separated")
	target := flag.String("target", "", "the service: keys <target>/<instance>")
	bAddr := flag.String("b", "", "B's address when the caller serves B (default: a server of its own)")
	flag.Parse()
	if *eps == "" || *target == "" {
		die("usage: go-resolver -endpoints URL -target SERVICE")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*eps, ","), DialTimeout: 5 * time.Second})
	if err != nil {
		die("connect: %v", err)
	}
	defer cli.Close()

	a, b := serve(), *bAddr
	if b == "" {
		b = serve()
	}
	lease, err := cli.Grant(ctx, 10)
	if err != nil {
		die("grant: %v", err)
	}
	em, err := endpoints.NewManager(cli, *target)
	if err != nil {
		die("endpoints manager: %v", err)
	}
	if err := em.AddEndpoint(ctx, *target+"/go-A", endpoints.Endpoint{Addr: a}, clientv3.WithLease(lease.ID)); err != nil {
		die("add endpoint: %v", err)
	}
	fmt.Printf("A %s\nB %s\n", a, b)

	line := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(os.Stdin).ReadString('\n')
		line <- err
	}()
	select {
	case err := <-line:
		if err != nil {
			die("stdin: %v", err)
		}
	case <-ctx.Done():
		die("no line on stdin in time")
	}

	builder, err := resolver.NewBuilder(cli)
	if err != nil {
		die("resolver: %v", err)
	}
	conn, err := grpc.NewClient("etcd:///"+*target, grpc.WithResolvers(builder),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))
	if err != nil {
		die("dial: %v", err)
	}
	defer conn.Close()
	seen := map[string]bool{}
	for i := 0; i < 500 && !(seen[a] && seen[b]); i++ {
		var p peer.Peer
		callCtx, done := context.WithTimeout(ctx, 2*time.Second)
		_, err := healthpb.NewHealthClient(conn).Check(callCtx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p))
		done()
		if err == nil && p.Addr != nil {
			seen[p.Addr.String()] = true
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !(seen[a] && seen[b]) {
		die("health checks reached %v, not both %s and %s", seen, a, b)
	}
	fmt.Println("resolved A B")
	_ = em.DeleteEndpoint(context.Background(), *target+"/go-A")
}
