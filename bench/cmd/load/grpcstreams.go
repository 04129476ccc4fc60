package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
	"github.com/dwellhttp/dwell/examples/grpc/feedpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// grpc-streams: whether open gRPC streams cost the other calls their latency.
//
//	load grpc-streams -addr A -pid P -streams 2000 -conns 20 -c 4 -d 4s -publish 5 [-rest /hello]
//
// The probes — -c grpc-go unary calls (grpc.health.v1 Health/Check) in a closed loop on one
// connection of their own, then -c GETs of -rest on HTTP/1.1 keep-alive connections, each for -d
// — run twice: before any stream is open, and with -streams Follow streams of the feed
// (bench/internal/grpcfeed) open over -conns connections, a message published to them -publish
// times a second meanwhile. The figures: each probe's p99 both times and their ratio, and what
// the server holds with the streams open.

// tickText is the text of the messages published while measured.
const tickText = "tick"

// grpcStreamsResult is what grpc-streams prints.
type grpcStreamsResult struct {
	Mode      string  `json:"mode"`
	Streams   int     `json:"streams"`
	UnaryBase float64 `json:"unary_p99_base_us"`
	Unary     float64 `json:"unary_p99_us"`
	UnaryRPS  float64 `json:"unary_per_sec"`
	RESTBase  float64 `json:"rest_p99_base_us"`
	REST      float64 `json:"rest_p99_us"`
	RSSBase   int64   `json:"rss_base_bytes"`
	RSS       int64   `json:"rss_bytes"`
	// Published is how many messages were published while measured; Lost how many of the
	// streams' copies of them had not arrived 10 s after the last, which should be none; FanoutMs
	// the time from the last publish until every stream had it.
	Published int64   `json:"published"`
	Lost      int64   `json:"lost"`
	FanoutMs  float64 `json:"fanout_ms"`
	CPUPct    float64 `json:"cpu_pct"` // the server's CPU while the streams were open
}

func runGRPCStreams(ctx context.Context, args []string) (any, error) {
	var (
		cf             common
		streams, conns int
		probes         int
		dur            time.Duration
		publishPerSec  int
		restPath       string
	)
	fs := flag.NewFlagSet("grpc-streams", flag.ExitOnError)
	cf.register(fs, "")
	fs.IntVar(&streams, "streams", 2000, "Follow streams held open")
	fs.IntVar(&conns, "conns", 20, "connections the streams are spread over")
	fs.IntVar(&probes, "c", 4, "probes in flight, unary calls and REST GETs each")
	fs.DurationVar(&dur, "d", 4*time.Second, "each probe's measurement")
	fs.IntVar(&publishPerSec, "publish", 5, "messages published to the streams a second while they are open")
	fs.StringVar(&restPath, "rest", "", "the REST route probed (none: the server serves gRPC alone)")
	fs.Parse(args)
	if cf.pid == 0 || streams <= 0 || conns <= 0 {
		return nil, errors.New("-pid, -streams and -conns are required")
	}
	dial := func() (*grpc.ClientConn, error) {
		return grpc.NewClient(cf.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	unaryConnection, err := dial()
	if err != nil {
		return nil, err
	}
	defer unaryConnection.Close()
	health := healthpb.NewHealthClient(unaryConnection)
	feed := feedpb.NewFeedClient(unaryConnection)

	probe := func() (unary, rest float64, perSec float64, err error) {
		lats, n, err := grpcProbe(ctx, health, probes, dur)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("unary calls: %w", err)
		}
		unary, perSec = quantile(lats, 0.99), float64(n)/dur.Seconds()
		if restPath != "" {
			d, err := newDialer(cf.addr, probes)
			if err != nil {
				return 0, 0, 0, err
			}
			all, _, err := latLoad(ctx, d, request("GET", restPath, cf.addr, -1), probes, time.Now().Add(dur))
			if err != nil {
				return 0, 0, 0, fmt.Errorf("REST: %w", err)
			}
			rest = quantile(all, 0.99)
		}
		return unary, rest, perSec, nil
	}

	// Warm up, then the probes alone.
	if _, _, err := grpcProbe(ctx, health, probes, time.Second); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	res := &grpcStreamsResult{Mode: "grpc-streams", Streams: streams}
	if res.UnaryBase, res.RESTBase, _, err = probe(); err != nil {
		return nil, err
	}
	if res.RSSBase, err = proc.RSS(cf.pid); err != nil {
		return nil, err
	}

	// The streams, each from the topic's end: established once each has the first message.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		delivered atomic.Int64
		lastRecv  atomic.Int64 // when a stream last received a message published while measured (UnixNano)
		started   sync.WaitGroup
		ended     sync.WaitGroup
		streamErr atomic.Pointer[error]
	)
	started.Add(streams)
	for i := range conns {
		cc, err := dial()
		if err != nil {
			return nil, err
		}
		defer cc.Close()
		client := feedpb.NewFeedClient(cc)
		for range streams/conns + min(1, max(0, streams%conns-i)) {
			ended.Go(func() {
				first := true
				s, err := client.Follow(sctx, &feedpb.FollowRequest{After: 1 << 62})
				for err == nil {
					var m *feedpb.Message
					if m, err = s.Recv(); err == nil {
						if first {
							first = false
							started.Done()
						}
						if m.Text == tickText {
							delivered.Add(1)
							lastRecv.Store(time.Now().UnixNano())
						}
					}
				}
				if sctx.Err() == nil {
					streamErr.CompareAndSwap(nil, &err)
				}
				if first {
					started.Done()
				}
			})
		}
	}
	// Publish until every stream has had a message: a stream not yet open misses the first.
	done := make(chan struct{})
	go func() { started.Wait(); close(done) }()
	for {
		if _, err := feed.Publish(ctx, &feedpb.PublishRequest{Text: "first"}); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		select {
		case <-done:
		case <-time.After(time.Second):
			if p := streamErr.Load(); p != nil {
				return nil, fmt.Errorf("a stream: %w", *p)
			}
			continue
		}
		break
	}

	// The publisher, and the probes again.
	pubCtx, stopPub := context.WithCancel(ctx)
	var (
		publishing sync.WaitGroup
		published  atomic.Int64
		lastAt     time.Time // when the last publish was sent, written by the publisher
	)
	publishing.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(max(publishPerSec, 1)))
		defer tick.Stop()
		for {
			select {
			case <-pubCtx.Done():
				return
			case <-tick.C:
				at := time.Now()
				if _, err := feed.Publish(pubCtx, &feedpb.PublishRequest{Text: tickText}); err == nil {
					lastAt = at
					published.Add(1)
				}
			}
		}
	})
	cpu0, err := proc.CPU(cf.pid)
	if err != nil {
		stopPub()
		return nil, err
	}
	t0 := time.Now()
	res.Unary, res.REST, res.UnaryRPS, err = probe()
	span := time.Since(t0)
	cpu1, cpuErr := proc.CPU(cf.pid)
	res.RSS, _ = proc.RSS(cf.pid)
	stopPub()
	publishing.Wait()
	// Every stream's copy of every message published, and how long the last took to reach all:
	// a second apart, the messages before it have reached every stream by then.
	res.Published = published.Load()
	want := res.Published * int64(streams)
	// The streams' readers count deliveries as they come, each on its own goroutine: polling the
	// count (the load tool's own goroutine, never a server's) is simpler than a signal per copy.
	for drain := time.Now().Add(10 * time.Second); delivered.Load() < want && time.Now().Before(drain); {
		time.Sleep(time.Millisecond)
	}
	res.Lost = want - delivered.Load()
	if res.Lost == 0 && res.Published > 0 {
		res.FanoutMs = float64(lastRecv.Load()-lastAt.UnixNano()) / 1e6
	}
	if err := errors.Join(err, cpuErr); err != nil {
		return nil, err
	}
	if p := streamErr.Load(); p != nil {
		return nil, fmt.Errorf("a stream: %w", *p)
	}
	res.CPUPct = float64(cpu1-cpu0) / float64(span) * 100
	cancel()
	ended.Wait()
	logf("grpc-streams: %d streams; unary p99 %.0f µs (%.0f µs without), REST p99 %.0f µs (%.0f µs without); RSS %d KiB (%d KiB without); %d published, %d copies lost, the last to all in %.1f ms",
		streams, res.Unary, res.UnaryBase, res.REST, res.RESTBase, res.RSS>>10, res.RSSBase>>10, res.Published, res.Lost, res.FanoutMs)
	return res, nil
}

// grpcProbe makes Health/Check calls from c goroutines in a closed loop for d, and returns
// their latencies, sorted, and how many there were.
func grpcProbe(ctx context.Context, health healthpb.HealthClient, c int, d time.Duration) ([]time.Duration, int, error) {
	var (
		mu    sync.Mutex
		all   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	end := time.Now().Add(d)
	for range c {
		wg.Go(func() {
			var mine []time.Duration
			var err error
			for time.Now().Before(end) && ctx.Err() == nil {
				t0 := time.Now()
				if _, err = health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			first = firstErr(first, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	return all, len(all), first
}

// firstErr keeps the first error of several.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
