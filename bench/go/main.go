// The project's lock workloads (bench/src/workloads.rs) with etcd's own Go client and its
// concurrency.Mutex: the reference most teams would otherwise use, measured beside the bindings
// in every bench/run.py run.
//
//	bench_go --endpoints URL[,URL] --serve
//
// One workload per stdin line (`SECONDS WORKLOAD NAME`), one JSON line back for each, shaped like
// Report::json in bench/src/workloads.rs with "lang":"go", until stdin closes. Workloads:
// "lock uncontended" (one goroutine, one session), "lock many (64 tasks)" (64 goroutines on one
// client and one session, each its own name), "lock contended (N clients)" (N clients, each its
// own session, one name), and "queue (N workers)" (etcd's recipe.Queue: one producer, N workers,
// each a client of its own; queue.go). cpu_us_per_cycle is this process's CPU time (getrusage)
// over the timed window divided by the cycles (tasks).
//
//	bench_go --endpoints URL[,URL] --leases N [--lease-ttl TTL[,TTL...]] [--idle SECONDS]
//
// The Go client's side of the lease row of bench/examples/scale.rs (`leases`), printed in its
// style: N leases on one client, each kept alive as concurrency.Session does it, and the process's
// CPU over a window in which each is renewed at least once, per keepalive too.
//
//	bench_go --failover --leader-endpoints PROXY_URL --endpoints URL[,URL] [--ttl SECONDS]
//
// One round of bench/examples/failover.rs with concurrency.Election, driven by lines on stdin and
// stdout (failover.go).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

type report struct {
	name           string
	cyclesPerSec   float64
	p50, p99, jain *float64 // nil: not measured
	cpuPerCycle    *float64 // microseconds
}

func (r report) json() string {
	num := func(v *float64, scale float64) string {
		if v == nil {
			return "null"
		}
		return strconv.FormatFloat(*v*scale, 'f', 4, 64)
	}
	return fmt.Sprintf(`{"lang":"go","workload":"%s","cycles_per_sec":%.1f,"handoff_p50_ms":%s,"handoff_p99_ms":%s,"jain":%s,"cpu_us_per_cycle":%s}`,
		r.name, r.cyclesPerSec, num(r.p50, 1e3), num(r.p99, 1e3), num(r.jain, 1), num(r.cpuPerCycle, 1))
}

// cpuNow is this process's user and system CPU time so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		die("getrusage", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func die(what string, err error) {
	fmt.Fprintf(os.Stderr, "bench_go: %s: %v\n", what, err)
	os.Exit(1)
}

func unique(tag string) string {
	return fmt.Sprintf("bench/go-%s-%d-%08x", tag, os.Getpid(), rand.Uint32())
}

func connect(endpoints []string) *clientv3.Client {
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		die("connect", err)
	}
	return c
}

func session(c *clientv3.Client) *concurrency.Session {
	s, err := concurrency.NewSession(c, concurrency.WithTTL(30))
	if err != nil {
		die("session", err)
	}
	return s
}

func cycle(ctx context.Context, m *concurrency.Mutex) {
	if err := m.Lock(ctx); err != nil {
		die("lock", err)
	}
	if err := m.Unlock(ctx); err != nil {
		die("unlock", err)
	}
}

// lockMany: `tasks` goroutines on one client and one session (one lease, as the bindings' one
// client), each locking its own name.
func lockMany(endpoints []string, tasks int, dur time.Duration) (cycles int64, cpu time.Duration) {
	c := connect(endpoints)
	defer c.Close()
	s := session(c)
	defer s.Close()
	ctx := context.Background()
	prefix := unique("lock")
	mutexes := make([]*concurrency.Mutex, tasks)
	for i := range mutexes {
		mutexes[i] = concurrency.NewMutex(s, fmt.Sprintf("%s/%d", prefix, i))
		cycle(ctx, mutexes[i])
	}
	counts := make([]int64, tasks)
	var wg sync.WaitGroup
	cpu0 := cpuNow()
	deadline := time.Now().Add(dur)
	for i, m := range mutexes {
		wg.Add(1)
		go func(i int, m *concurrency.Mutex) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				cycle(ctx, m)
				counts[i]++
			}
		}(i, m)
	}
	wg.Wait()
	cpu = cpuNow() - cpu0
	for _, n := range counts {
		cycles += n
	}
	return cycles, cpu
}

// contended: `clients` clients, each its own connection and session, one name.
func contended(endpoints []string, clients int, dur time.Duration) report {
	name := unique("contended")
	type span struct{ acquired, releasing time.Time }
	var mu sync.Mutex
	var timeline []span
	conns := make([]*clientv3.Client, clients)
	sessions := make([]*concurrency.Session, clients)
	for i := range conns {
		conns[i] = connect(endpoints)
		sessions[i] = session(conns[i])
	}
	counts := make([]float64, clients)
	var wg sync.WaitGroup
	cpu0 := cpuNow()
	start := time.Now()
	deadline := start.Add(dur)
	for i := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := concurrency.NewMutex(sessions[i], name)
			ctx := context.Background()
			for time.Now().Before(deadline) {
				if err := m.Lock(ctx); err != nil {
					die("lock", err)
				}
				acquired := time.Now()
				releasing := time.Now()
				if err := m.Unlock(ctx); err != nil {
					die("unlock", err)
				}
				mu.Lock()
				timeline = append(timeline, span{acquired, releasing})
				mu.Unlock()
				counts[i]++
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuNow() - cpu0
	for i := range conns {
		sessions[i].Close()
		conns[i].Close()
	}
	sort.Slice(timeline, func(a, b int) bool { return timeline[a].acquired.Before(timeline[b].acquired) })
	var handoffs []float64
	for i := 1; i < len(timeline); i++ {
		h := timeline[i].acquired.Sub(timeline[i-1].releasing).Seconds()
		if h < 0 {
			h = 0
		}
		handoffs = append(handoffs, h)
	}
	sort.Float64s(handoffs)
	pct := func(p float64) *float64 {
		if len(handoffs) == 0 {
			return nil
		}
		v := handoffs[int(float64(len(handoffs)-1)*p+0.5)]
		return &v
	}
	var sum, sq float64
	for _, n := range counts {
		sum += n
		sq += n * n
	}
	r := report{name: fmt.Sprintf("lock contended (%d clients)", clients), cyclesPerSec: sum / elapsed.Seconds(), p50: pct(0.5), p99: pct(0.99)}
	if sq > 0 {
		j := sum * sum / (float64(len(counts)) * sq)
		r.jain = &j
		c := float64(cpu.Microseconds()) / sum
		r.cpuPerCycle = &c
	}
	return r
}

func simple(name string, cycles int64, cpu, dur time.Duration) report {
	r := report{name: name, cyclesPerSec: float64(cycles) / dur.Seconds()}
	if cycles > 0 {
		c := float64(cpu.Microseconds()) / float64(cycles)
		r.cpuPerCycle = &c
	}
	return r
}

// row prints one result beside its target, as `row` in bench/examples/scale.rs does.
func row(what, result, target string, met bool) {
	verdict := "NOT MET"
	if met {
		verdict = "met"
	}
	fmt.Printf("%-58s %14s   target %-10s %s\n", what, result, target, verdict)
}

// leases: `n` leases of `ttl` seconds on one client, the CPU keeping them alive over a window
// that renews each at least once (one TTL/3 after the last grant, or `idle` if longer). Mirrors
// `leases` in bench/examples/scale.rs, with the Go client doing what concurrency.NewSession does
// for each lease: Grant, KeepAlive under a cancelable context, and a goroutine draining the channel.
func leases(endpoints []string, n int, ttl int64, idle time.Duration) {
	c := connect(endpoints)
	var answered atomic.Int64 // keepalive responses the draining goroutines received
	var closed atomic.Int64   // KeepAlive channels closed: the client gave that lease up
	ids := make([]clientv3.LeaseID, n)
	cancels := make([]context.CancelFunc, n)
	next := make(chan int)
	var wg sync.WaitGroup
	t0 := time.Now()
	// 64 workers taking the next lease in turn: 64 grants in flight, as scale.rs's semaphore.
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				g, err := c.Grant(c.Ctx(), ttl)
				if err != nil {
					die("grant", err)
				}
				// As NewSession: a context of its own per lease, so that it can be given up alone.
				ctx, cancel := context.WithCancel(c.Ctx())
				ch, err := c.KeepAlive(ctx, g.ID)
				if err != nil {
					die("keepalive", err)
				}
				ids[i], cancels[i] = g.ID, cancel
				go func() {
					for range ch {
						answered.Add(1)
					}
					closed.Add(1)
				}()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	granted := time.Since(t0)
	window := max(idle, time.Duration(ttl)*time.Second/3+granted)
	cpu0, answered0 := cpuNow(), answered.Load()
	time.Sleep(window)
	share := (cpuNow() - cpu0).Seconds() / window.Seconds()
	got := answered.Load() - answered0
	// Alive: the client still keeps it (its channel open) and etcd still has it, which
	// TimeToLive checks on a sample spread over all of them (after the window, so not counted).
	const sample = 100
	step := max(1, n/sample)
	var checked, expired int
	for i := 0; i < n; i += step {
		r, err := c.TimeToLive(c.Ctx(), ids[i])
		if err != nil {
			die("timetolive", err)
		}
		checked++
		if r.TTL <= 0 {
			expired++
		}
	}
	lost := closed.Load()
	alive := int64(n) - lost
	for _, cancel := range cancels {
		cancel()
	}
	c.Close()
	perSecond := float64(n) * 3 / float64(ttl)
	fmt.Printf("%d leases kept alive by one client (TTL %d s, %.0f keepalives a second; granted in %.2f s):\n", n, ttl, perSecond, granted.Seconds())
	row(fmt.Sprintf("  CPU keeping them alive (%.1f s)", window.Seconds()), fmt.Sprintf("%.2f %%", share*100), "<= 2 %", share <= 0.02)
	perKeepalive := share * window.Seconds() / float64(max(got, 1))
	fmt.Printf("  %-56s %14s\n", "client CPU per keepalive answered", fmt.Sprintf("%.1f us (%d)", perKeepalive*1e6, got))
	row("  still alive at the end (channel open)", fmt.Sprintf("%d", alive), fmt.Sprintf("%d", n), alive == int64(n))
	row("  expired in etcd, of a TimeToLive sample", fmt.Sprintf("%d of %d", expired, checked), "0", expired == 0)
}

func main() {
	endpoints := flag.String("endpoints", "", "etcd client URLs, comma-separated")
	serve := flag.Bool("serve", false, "run the workloads named on stdin (see the package comment)")
	nLeases := flag.Int("leases", 0, "keep this many leases alive on one client instead (see the package comment)")
	ttls := flag.String("lease-ttl", "5,60", "lease TTLs in seconds, comma-separated, one run each")
	idle := flag.Float64("idle", 5, "shortest window measured, seconds")
	fail := flag.Bool("failover", false, "one election failover round instead (see failover.go)")
	leaderEndpoints := flag.String("leader-endpoints", "", "--failover: the leader's client URLs (the example's proxy)")
	ttl := flag.Int("ttl", 2, "--failover: the sessions' TTL, seconds")
	queue := flag.Bool("queue", false, "the task queue row with recipe.Queue instead (see queue.go)")
	tasks := flag.Int("tasks", 2000, "--queue: items")
	workers := flag.Int("workers", 4, "--queue: workers, each a client of its own")
	paced := flag.Bool("paced", false, "--queue: one item at a time, each put once the last was dequeued (see queue.go)")
	gap := flag.Float64("gap-ms", 20, "--queue --paced: mean milliseconds between a dequeue and the next put (exponential)")
	flag.Parse()
	if *queue && *endpoints != "" && *tasks > 0 && *workers > 0 {
		if *paced {
			queuePaced(strings.Split(*endpoints, ","), *tasks, *workers, time.Duration(*gap*float64(time.Millisecond)))
		} else {
			queueBench(strings.Split(*endpoints, ","), *tasks, *workers)
		}
		os.Exit(0)
	}
	if *fail && *endpoints != "" && *leaderEndpoints != "" && *ttl > 0 && !*serve && *nLeases <= 0 {
		failover(strings.Split(*leaderEndpoints, ","), strings.Split(*endpoints, ","), *ttl)
		return
	}
	if *fail || *endpoints == "" || (!*serve && *nLeases <= 0) {
		fmt.Fprintln(os.Stderr, "usage: bench_go --endpoints URL[,URL] --serve")
		fmt.Fprintln(os.Stderr, "       bench_go --endpoints URL[,URL] --leases N [--lease-ttl TTL[,TTL...]] [--idle SECONDS]")
		fmt.Fprintln(os.Stderr, "       bench_go --failover --leader-endpoints PROXY_URL --endpoints URL[,URL] [--ttl SECONDS]")
		fmt.Fprintln(os.Stderr, "       bench_go --queue --endpoints URL[,URL] [--tasks N] [--workers N] [--paced [--gap-ms MS]]")
		os.Exit(2)
	}
	eps := strings.Split(*endpoints, ",")
	if *nLeases > 0 {
		for _, t := range strings.Split(*ttls, ",") {
			ttl, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
			if err != nil || ttl <= 0 {
				die("--lease-ttl TTL[,TTL...]", fmt.Errorf("bad TTL %q", t))
			}
			leases(eps, *nLeases, ttl, time.Duration(*idle*float64(time.Second)))
		}
		return
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		secs, name, ok := strings.Cut(strings.TrimSpace(in.Text()), " ")
		if !ok {
			break
		}
		s, err := strconv.ParseFloat(secs, 64)
		if err != nil {
			die("SECONDS WORKLOAD", err)
		}
		dur := time.Duration(s * float64(time.Second))
		var r report
		switch name {
		case "lock uncontended":
			n, cpu := lockMany(eps, 1, dur)
			r = simple(name, n, cpu, dur)
		case "lock many (64 tasks)":
			n, cpu := lockMany(eps, 64, dur)
			r = simple(name, n, cpu, dur)
		case "lock contended (4 clients)":
			r = contended(eps, 4, dur)
		case "lock contended (16 clients)":
			r = contended(eps, 16, dur)
		case "queue (4 workers)":
			r = queueWindow(eps, 4, dur)
		case "queue (16 workers)":
			r = queueWindow(eps, 16, dur)
		default:
			die("workload", fmt.Errorf("unknown workload %q", name))
		}
		fmt.Println(r.json())
	}
}
