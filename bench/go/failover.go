package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// failover: one round of bench/examples/failover.rs with concurrency.Election. A leader campaigns
// on a client that reaches etcd through the example's TCP proxy (leaderEps), a second candidate
// on a client of its own (eps) waits; the example black-holes the proxy (a killed or frozen
// process: no resign, no keepalive) and this times the stop to the second Campaign returning.
// Lines, one each way in turn: "ready" out, "stopped" in (the proxy black-holed), "took MS" out,
// "reset" in (the proxy passes again); then it resigns, closes and exits 0. Every wait is bounded
// by TTL * 3 + 10 s; any error ends it with a message on stderr and status 1.
func failover(leaderEps, eps []string, ttl int) {
	limit := time.Duration(ttl*3+10) * time.Second
	lines := make(chan string)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- strings.TrimSpace(in.Text())
		}
		close(lines)
	}()
	expect := func(want string) {
		select {
		case line, ok := <-lines:
			if !ok || line != want {
				die("stdin", fmt.Errorf("expected %q, got %q (closed: %v)", want, line, !ok))
			}
		case <-time.After(limit):
			die("stdin", fmt.Errorf("no %q within %v", want, limit))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	name := unique("failover")
	// NewSession's own Grant would wait without a bound: the lease is granted here and handed to it.
	session := func(c *clientv3.Client) *concurrency.Session {
		g, err := c.Grant(ctx, int64(ttl))
		if err != nil {
			die("grant", err)
		}
		s, err := concurrency.NewSession(c, concurrency.WithTTL(ttl), concurrency.WithLease(g.ID))
		if err != nil {
			die("session", err)
		}
		return s
	}
	lc, nc := connect(leaderEps), connect(eps)
	ls, ns := session(lc), session(nc)
	first, next := concurrency.NewElection(ls, name), concurrency.NewElection(ns, name)
	if err := first.Campaign(ctx, "first"); err != nil {
		die("campaign first", err)
	}
	// Its own context: the wait is bounded from the stop on, below.
	waitCtx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	won := make(chan error, 1)
	go func() { won <- next.Campaign(waitCtx, "next") }()
	// Ready once the second candidate is queued behind the first.
	for {
		r, err := nc.Get(ctx, name+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			die("get", err)
		}
		if r.Count >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-won:
		die("campaign next", fmt.Errorf("returned while the first leads: %v", err))
	default:
	}
	fmt.Println("ready")
	expect("stopped")
	stopped := time.Now()
	select {
	case err := <-won:
		if err != nil {
			die("campaign next", err)
		}
	case <-time.After(limit):
		die("campaign next", fmt.Errorf("not leader within %v of the stop", limit))
	}
	took := time.Since(stopped)
	if next.Rev() <= first.Rev() {
		die("campaign next", fmt.Errorf("revision %d not above the first leader's %d", next.Rev(), first.Rev()))
	}
	fmt.Printf("took %.1f\n", took.Seconds()*1e3)
	expect("reset")
	ctx, cancel = context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := next.Resign(ctx); err != nil {
		die("resign", err)
	}
	if err := ns.Close(); err != nil { // revokes its lease, bounded by the TTL
		die("session close", err)
	}
	ls.Orphan() // its lease expired: that was the failover
	nc.Close()
	lc.Close()
}
