// Command load measures what wrk cannot: server memory per idle or parked connection, latency
// percentiles from a closed loop, one-connection transfer rates with the server's memory growth,
// start-up time, and a server's CPU time. Each mode prints one JSON object on stdout, which the
// benchmark driver reads, and progress on stderr.
//
// Usage:
//
//	load idle     -addr HOST:PORT -pid PID -n 5000 -at 1000,5000
//	load park     -addr HOST:PORT -pid PID -n 5000 -at 1000,5000 -path /poll -release
//	load idle|park ... -tls -cert FILE [-curves x25519|default]   (over TLS)
//	load tls-handshake -addr HOST:PORT -pid PID -c 8 -warm 1s -d 4s [-resume] -cert FILE
//	load tls-burst -addr HOST:PORT -pid PID -n 1000 -probes 4 -cert FILE
//	load grpc-streams -addr HOST:PORT -pid PID -streams 2000 -conns 20 -c 4 -d 4s -publish 5 [-rest /hello]
//	load lat      -addr HOST:PORT -c 50 -d 4s -path /hello
//	load upload   -addr HOST:PORT -pid PID -size 536870912 -path /upload
//	load download -addr HOST:PORT -pid PID -size 536870912 -path /download
//	load startup  -addr HOST:PORT -n 5 -path /hello -- COMMAND ARGS...
//	load cpu      -pid PID [-- COMMAND ARGS...]
//	load ws-idle  -addr HOST:PORT -pid PID -n 5000 -at 1000,5000 -path /echo [-deflate]
//	load ws-echo  -addr HOST:PORT -pid PID -c 50 -warm 1s -d 4s -size 1024 -path /echo [-deflate]
//	load ws-bcast -addr HOST:PORT -pid PID -n 5000 -ticks 50 -interval 100ms -size 128 [-stalled 1000]
//	load h2-idle  -addr HOST:PORT -pid PID -n 5000 -at 1000,5000 -path /hello [-tls -cert FILE]
//	load h2-park  -addr HOST:PORT -pid PID -conns 50 -streams 100 -at 1000,5000 -path /poll -release [-tls -cert FILE]
//	load h2-abuse -addr HOST:PORT -pid PID -attack reset|continuation|settings|ping|priority|empty-data|window-update|zero-window|tiny-window -d 10s [-tls -cert FILE]
//
// tls-handshake opens connections in a loop, each a TLS handshake (full, or resumed with
// -resume) and one request (tls.go).
//
// The h2-* modes speak HTTP/2, h2c with prior knowledge or h2 over TLS (h2.go): h2-idle holds
// connections that each completed one request, h2-park parks many streams on each connection,
// h2-abuse times a normal client's requests while an attacker (h2-attack, a child process of
// its own) abuses the protocol (h2abuse.go).
//
// The ws-* modes speak WebSocket to the servers of package wspeer (bench/servers/*-ws), from
// one epoll loop (ws-echo, ws-bcast; see wspoll.go) or plain blocking sockets (ws-idle).
//
// PID is the server's process; its descendants are counted too (nginx serves from a worker).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// modes maps each subcommand to its implementation. A mode parses its own flags from args and
// returns the result object to print.
var modes = map[string]func(ctx context.Context, args []string) (any, error){
	"idle":          runIdle,
	"park":          runPark,
	"lat":           runLat,
	"upload":        runUpload,
	"download":      runDownload,
	"startup":       runStartup,
	"cpu":           runCPU,
	"tls-handshake": runTLSHandshake,
	"tls-burst":     runTLSBurst,
	"grpc-streams":  runGRPCStreams,
	"ws-idle":       runWSIdle,
	"ws-echo":       runWSEcho,
	"ws-bcast":      runWSBcast,
	"h2-idle":       runH2Idle,
	"h2-park":       runH2Park,
	"h2-abuse":      runH2Abuse,
	"h2-attack":     runH2Attack,
}

func main() {
	if len(os.Args) < 2 || modes[os.Args[1]] == nil {
		names := make([]string, 0, len(modes))
		for k := range modes {
			names = append(names, k)
		}
		slices.Sort(names)
		fmt.Fprintf(os.Stderr, "usage: load {%s} [flags]\n", strings.Join(names, "|"))
		os.Exit(2)
	}
	// Thousands of connections need thousands of descriptors.
	if _, err := proc.RaiseNofile(1 << 16); err != nil {
		fmt.Fprintln(os.Stderr, "load: raising RLIMIT_NOFILE:", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	res, err := modes[os.Args[1]](ctx, os.Args[2:])
	stop()
	stopChildren()
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// common holds the flags most modes share.
type common struct {
	addr string
	pid  int
	path string
}

func (c *common) register(fs *flag.FlagSet, path string) {
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "server address")
	fs.IntVar(&c.pid, "pid", 0, "server process id, for its memory and CPU (0: not measured)")
	fs.StringVar(&c.path, "path", path, "request path")
}

// checkpoints parses a comma-separated list of connection counts.
func checkpoints(s string, n int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 || v > n {
			return nil, fmt.Errorf("checkpoint %q must be a count in 1..%d", f, n)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 || out[len(out)-1] != n {
		out = append(out, n)
	}
	return out, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
}
