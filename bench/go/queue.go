package main

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
