package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	recipe "go.etcd.io/etcd/client/v3/experimental/recipes"
)

// queueBench: the end-to-end row of bench/examples/tasks.rs with etcd's recipe.Queue: one producer
// Enqueues n items as fast as it can while `workers` clients Dequeue them (Dequeue deletes the item
// before returning it: no claim, no ack, nothing redelivered if a worker dies). Prints one JSON
// line: tasks_per_s (first enqueue to last dequeue), p50_ms and p99_ms of enqueue-returned to
// dequeue-returned. Workers still blocked in Dequeue (which takes no context) end with the process.
func queueBench(eps []string, n, workers int) {
	limit := time.Duration(n/10+60) * time.Second
	name := unique("queue")
	putAt := make([]atomic.Int64, n)
	var mu sync.Mutex
	latencies := make([]float64, 0, n)
	var got atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	for w := 0; w < workers; w++ {
		c := connect(eps)
		q := recipe.NewQueue(c, name)
		go func() {
			for {
				v, err := q.Dequeue()
				if err != nil {
					die("dequeue", err)
				}
				at := time.Now()
				i, err := strconv.Atoi(v)
				if err != nil {
					die("dequeue", err)
				}
				if p := putAt[i].Load(); p != 0 {
					mu.Lock()
					latencies = append(latencies, float64(at.UnixNano()-p)/1e6)
					mu.Unlock()
				}
				if got.Add(1) == int64(n) {
					close(done)
				}
			}
		}()
	}
	producer := connect(eps)
	q := recipe.NewQueue(producer, name)
	for i := 0; i < n; i++ {
		if err := q.Enqueue(strconv.Itoa(i)); err != nil {
			die("enqueue", err)
		}
		putAt[i].Store(time.Now().UnixNano())
	}
	select {
	case <-done:
	case <-time.After(limit):
		die("queue", fmt.Errorf("only %d of %d dequeued within %v", got.Load(), n, limit))
	}
	took := time.Since(start).Seconds()
	mu.Lock()
	sort.Float64s(latencies)
	pct := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[int(float64(len(latencies)-1)*p+0.5)]
	}
	fmt.Printf("{\"tasks_per_s\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n", float64(n)/took, pct(0.5), pct(0.99))
	mu.Unlock()
}

// The payload of every item in the queue windows, as bench/src/queue.rs's; stopItem ends a worker.
const (
	queuePayload     = "task-0123456789"
	stopItem         = "stop"
	backlogPerWorker = 2
)

// queueWindow: bench/run.py's "queue (N workers)" window with recipe.Queue, as bench/src/queue.rs
// runs it with etcdlock: a queue of its own, one producer and `workers` workers, each a client of
// its own. The producer Enqueues as fast as it can while it is fewer than 2 × workers items ahead
// of the Dequeues; workers Dequeue (no ack: the item is deleted on dequeue). Tasks/s is the items
// dequeued by the window's end per second of window, CPU per task the process's over the window.
// After it, what is left is dequeued uncounted, then one stop item per worker ends the workers
// (Dequeue takes no context, and a client closed under a waiting Dequeue makes it dereference a
// nil event), so that the queue is empty and every goroutine gone before the next window.
func queueWindow(eps []string, workers int, dur time.Duration) report {
	name := unique("queue")
	producer := connect(eps)
	conns := make([]*clientv3.Client, workers)
	for i := range conns {
		conns[i] = connect(eps)
	}
	backlog := make(chan struct{}, backlogPerWorker*workers) // one token per item enqueued, not yet dequeued
	var acked atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuNow()
	deadline := time.Now().Add(dur)
	for _, c := range conns {
		q := recipe.NewQueue(c, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, err := q.Dequeue()
				if err != nil {
					die("dequeue", err)
				}
				if v == stopItem {
					return
				}
				<-backlog
				if !time.Now().After(deadline) {
					acked.Add(1)
				}
			}
		}()
	}
	q := recipe.NewQueue(producer, name)
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
put:
	for {
		select {
		case backlog <- struct{}{}:
		case <-end.C:
			break put
		}
		if time.Now().After(deadline) {
			break
		}
		if err := q.Enqueue(queuePayload); err != nil {
			die("enqueue", err)
		}
	}
	cpu := cpuNow() - cpu0
	n := acked.Load()
	for range conns {
		if err := q.Enqueue(stopItem); err != nil {
			die("enqueue", err)
		}
	}
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	producer.Close()
	return simple(fmt.Sprintf("queue (%d workers)", workers), n, cpu, dur)
}

// queuePaced: the put → claim latency of bench/examples/tasks.rs's paced row with recipe.Queue:
// `workers` clients wait in Dequeue; the producer Enqueues one item, waits for a worker's
// Dequeue to return it, then a random gap (exponential, mean `gap`), and so on, n times. Once the
// workers wait it prints "ready" and starts at the next line on stdin (the caller reads etcd's
// request count in between); then one JSON line: p50_ms, p90_ms and p99_ms of Enqueue returned
// → Dequeue returned. The workers end with the process.
func queuePaced(eps []string, n, workers int, gap time.Duration) {
	name := unique("paced")
	got := make(chan time.Time)
	for w := 0; w < workers; w++ {
		q := recipe.NewQueue(connect(eps), name)
		go func() {
			for {
				if _, err := q.Dequeue(); err != nil {
					die("dequeue", err)
				}
				got <- time.Now()
			}
		}()
	}
	q := recipe.NewQueue(connect(eps), name)
	time.Sleep(500 * time.Millisecond) // every worker waiting
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		die("stdin", err)
	}
	latencies := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		if err := q.Enqueue(strconv.Itoa(i)); err != nil {
			die("enqueue", err)
		}
		put := time.Now()
		select {
		case at := <-got:
			latencies = append(latencies, math.Max(0, float64(at.Sub(put))/1e6))
		case <-time.After(10 * time.Second):
			die("queue", fmt.Errorf("item %d not dequeued within 10 s", i))
		}
		time.Sleep(time.Duration(rand.ExpFloat64() * float64(gap)))
	}
	sort.Float64s(latencies)
	pct := func(p float64) float64 { return latencies[int(float64(len(latencies)-1)*p+0.5)] }
	fmt.Printf("{\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f}\n", pct(0.5), pct(0.9), pct(0.99))
}
