package main

import (
	"fmt"
	"slices"
	"strings"
)

// wsSummaryRows are the WebSocket summary's rows, one figure's metric each.
var wsSummaryRows = []struct{ fig, metric, label string }{
	{"ws-idle", "kib", "idle connection: KiB of server RSS (1,000 → 5,000)"},
	{"ws-idle", "kib_first", "idle connection: KiB of server RSS (start → 1,000)"},
	{"ws-idle-deflate", "kib", "idle connection, permessage-deflate: KiB of server RSS (1,000 → 5,000)"},
	{"ws-echo", "cpu_us", fmt.Sprintf("echo %d B, %d connections: server CPU µs per message", wsMessageSize, wsEchoConns)},
	{"ws-echo", "mps", fmt.Sprintf("echo %d B, %d connections: messages per second", wsMessageSize, wsEchoConns)},
	{"ws-c1", "p50_us", "echo, one connection: round trip p50 µs"},
	{"ws-c1", "p99_us", "echo, one connection: round trip p99 µs"},
	{"ws-c1", "cpu_us", "echo, one connection: server CPU µs per message"},
	{"ws-bcast", "cpu_us", "broadcast to 5,000: server CPU µs per frame delivered"},
	{"ws-bcast", "p99_ms", "broadcast to 5,000: delivery delay p99 ms"},
	{"ws-bcast", "rss_mib", "broadcast to 5,000: server RSS growth MiB (peak)"},
	{"ws-stall", "delivered_pct", "broadcast, 1,000 stalled: % of frames the 4,000 readers got"},
	{"ws-stall", "p99_ms", "broadcast, 1,000 stalled: readers' delay p99 ms"},
	{"ws-stall", "rss_mib", "broadcast, 1,000 stalled: server RSS growth MiB (peak)"},
	{"ws-deflate", "cpu_us", fmt.Sprintf("compressed echo of %d B JSON: server CPU µs per message", wsMessageSize)},
}

func init() {
	for id, text := range wsMeanings {
		meanings[id] = text
	}
}

// wsMeanings explain the WebSocket figures in the report.
var wsMeanings = map[string]string{
	"ws-idle": "The load tool opens 1,000 connections to GET /echo, upgrades each, has it echo one " +
		"1,024-byte binary message and leaves it idle, waits for the server to go quiet and reads its " +
		"VmRSS; then the same up to 5,000. (RSS@5000 − RSS@1000) / 4000 is what one idle WebSocket costs, " +
		"as for idle HTTP connections; start → 1,000 adds what the first thousand cost over the freshly " +
		"started server (pools, the runtime's heap growth). RSS counts what the Go runtime keeps of freed " +
		"memory too: a server that allocates while it upgrades and echoes pays for it here even once the " +
		"garbage is collected. dwell is measured in three ways: the event style (Serve, Events: nothing " +
		"held between messages but the connection's state), dwell-seq (Accept, the handler parked in " +
		"ReadMessage, as gorilla-style code is written) and dwell-gorilla (gorilla/websocket's own echo " +
		"through router.HandleHTTP and the net/http bridge's Hijack). gorilla, coder and gws run on net/http's " +
		"server with a goroutine per connection; nbio on its own epoll poller; the floor holds a connection " +
		"as a descriptor in its epoll set and a small struct.",
	"ws-idle-deflate": "The idle figure with permessage-deflate negotiated: the client offers it as a browser " +
		"does (`permessage-deflate; client_max_window_bits`, leaving context takeover to the server), and " +
		"each connection echoes one 1,024-byte JSON text, compressed, before it idles. Every server is set up " +
		"without context takeover either way, the server asking the client not to carry its window either " +
		"(the answers are listed under the table): dwell with Options.Compress (ContextTakeover false), " +
		"gorilla with EnableCompression (it speaks no context takeover only), coder with " +
		"CompressionNoContextTakeover, gws with PermessageDeflate{Enabled: true} (its default: no takeover " +
		"either way), nbio with EnableCompression (no context takeover only). So a connection between " +
		"messages needs no compressor or decompressor of its own; what it holds is what each library keeps.",
	"ws-echo": "The load tool keeps 50 connections, each sending a 1,024-byte binary message and the next as " +
		"soon as its echo is in (one in flight per connection), for the run's duration after a warm-up " +
		"with the same load. Server CPU per message is the server's CPU time over the run (all its threads, " +
		"from /proc, as for the HTTP figures) divided by the echoes. It leaves out the softirq time the " +
		"server's sends cost its core, which no thread is charged with: on loopback the receiving " +
		"socket's processing runs there, about 3 µs a message on the machine measured, alike for " +
		"every server (the noise row leaves interrupts out for that reason). Messages per second is bounded by " +
		"the client on the other core as much as by the server, so compare CPU first. The client is one " +
		"epoll loop over raw sockets (bench/cmd/load/wspoll.go): a read and a write per message, frames " +
		"built once. Each server runs its library's own echo: dwell's Send from Events.Message, " +
		"dwell-seq's ReadMessage/WriteMessage, gorilla's ReadMessage/WriteMessage (its examples/echo), " +
		"coder's Reader/Writer with io.Copy (its examples/echo), gws's OnMessage writing back, nbio's " +
		"OnMessage writing back, the floor unmasking every frame of a read and writing the echoes back " +
		"with one write.",
	"ws-c1": "The echo over one connection: every message waits for the last echo, so the server sleeps " +
		"between messages and each pays a wake-up, a read and a write; p50 and p99 are round trips as " +
		"the client's loop sees them.",
	"ws-bcast": "5,000 clients join GET /broadcast; the load tool then asks the server (GET /start) to " +
		"broadcast 128-byte binary messages every 100 ms, each stamped with the time the server sent it, " +
		"and every client reads them from one epoll loop and takes its delay from the stamp to its read " +
		"(both on the machine's clock). Server CPU per frame is the server's CPU time from the start to " +
		"the last delivery over the frames delivered; delays are over every frame, so the p99 is the time " +
		"the server takes to reach nearly all 5,000 with a message. Each server broadcasts its library's " +
		"way: dwell a websocket.Group's Broadcast of a PreparedMessage (framed once, written by the loop), " +
		"gorilla its chat example's hub (a PreparedMessage queued to a writer goroutine per connection), " +
		"coder its chat example's (a channel per connection, its handler writing with a 5 s timeout), gws " +
		"a Broadcaster (framed once, queued on each connection's write queue), nbio WriteMessage to each " +
		"connection in turn, the floor one frame made once and written to each connection with a write of " +
		"its own (the payload handed to its loop through an eventfd). RSS growth is the peak over the run " +
		"above the RSS before it, sampled every 10 ms: what the broadcast itself costs in memory.",
	"ws-stall": "The broadcast with 1,000 of the 5,000 clients, spread among them, never reading (their " +
		"receive buffer set to 4 KiB before they connect): the other 4,000 must still receive every frame, " +
		"in order and on time, and the server's memory must stay bounded. Each server is set up with the " +
		"bound its library offers: dwell Options.MaxQueued 64 KiB (the default slow-client policy closes " +
		"the client past it), nbio MaxWriteBufferSize 64 KiB (closes past it), the floor 64 KiB of output " +
		"per connection (closes past it), gorilla and coder a queue of 64 messages per connection (their " +
		"examples close the client when it is full); gws has no " +
		"bound (its write queue grows, a goroutine blocks in the write). Once the broadcast is over the " +
		"stalled clients read what reaches them, which tells those the server closed from those it kept. " +
		"At 128 bytes every 100 ms a stalled client's share of a 5 s run, 6.4 KB, fits in the kernel's " +
		"socket buffers: what this figure shows is isolation (the readers unaffected) and memory, not " +
		"each library's slow-client bound, which a run this short cannot reach at this rate.",
	"ws-deflate": "The echo figure with permessage-deflate negotiated as for the idle one, and a 1,024-byte " +
		"JSON text (a list of records, which compresses to about a third) as the message, compressed by " +
		"the client once at flate's default level and sent as it is. Every server inflates it, checks its " +
		"UTF-8 and compresses its echo (each compresses messages of this size: dwell from 128 bytes, coder " +
		"and gws from 512, gorilla and nbio all), so server CPU per message is both directions' codec " +
		"work on top of the echo's. The client inflates the first echo of every 64 to check it.",
}

// wsSummary writes the WebSocket summary: for each row, each contender's median and its ratio
// to the row's best peer, named in the last column.
func (r *runner) wsSummary(b *strings.Builder) {
	servers := r.res.WSServers
	var rows []string
	for _, row := range wsSummaryRows {
		f := r.res.figure(row.fig)
		if f == nil {
			continue
		}
		mt := f.metric(row.metric)
		cells := make([]string, len(servers))
		for i, s := range servers {
			cells[i] = cellBest(f, mt, s)
		}
		best := "—"
		if mt.Best != "" {
			best = mt.Best
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", row.label, strings.Join(cells, " | "), best))
	}
	if len(rows) == 0 || len(servers) == 0 {
		return
	}
	b.WriteString("## WebSocket\n\n")
	b.WriteString("Package websocket beside gorilla/websocket, coder/websocket, gws and nbio, each server alone " +
		"on CPU " + serverCPU + " as for the HTTP figures. Each cell is the median over the rounds and, in " +
		"parentheses, the median of the per-round ratios to the best peer of the row (the peer among " +
		"gorilla, coder, gws and nbio with the best median, named in the last column): below 1.00× is " +
		"better than the best peer where lower is better (memory, CPU, delay), above 1.00× where higher " +
		"is (messages per second, frames delivered). See the figures' tables and what they mean below.")
	if slices.Contains(servers, "floor") {
		b.WriteString(" The floor column is no WebSocket library but the floor of the figures, and never the " +
			"best peer: one epoll loop on one thread (bench/servers/ws-floor) with the least HTTP and WebSocket the figures need, which unmasks " +
			"the frames of a read and writes them back with one write, and writes a broadcast's frame, made " +
			"once, to each connection with a write of its own. It costs what the syscalls and the loopback TCP " +
			"stack cost; a contender's gap to it is mostly the contender's own work. It sits out the " +
			"permessage-deflate figures.")
	}
	b.WriteString("\n\n")
	fmt.Fprintf(b, "| figure | %s | best peer |\n|---|%s---|\n", strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
	for _, row := range rows {
		b.WriteString(row)
	}
	b.WriteString("\n")
}

// cellBest is a WebSocket summary cell: median and ratio to the best peer.
func cellBest(f *Figure, mt *Metric, srv string) string {
	if _, ok := f.Absent[srv]; ok {
		return "—"
	}
	sum, ok := mt.Summary[srv]
	if !ok {
		if len(f.Failed[srv]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	s := fmtNum(sum.Median, mt.Digits)
	if q, ok := sum.ratio(mt.Best); ok && mt.Best != "" && srv != mt.Best && !noRatio[mt.ID] {
		s += fmt.Sprintf(" (%.2f×)", q)
	}
	return s
}
