// Command paths counts the files of dwell that one exchange passes through: one HTTP/1.1
// request, one HTTP/2 stream's request, one WebSocket message (echoed, in each of the two
// styles: the event style, websocket.Serve, which make bench's echo uses, and the sequential
// one, a handler reading and writing). It builds ./probe with
// coverage of every dwell package, runs it once for each exchange — the probe warms the
// connection up, clears the counters and makes the exchange once more — and lists, for each,
// the files of dwell in which a statement ran, the probe's own aside. A file counts once
// whatever ran in it: a helper of one line counts as the file it is in. A line under each count
// says how many of the files are of each layer (layerOf). With -funcs it lists, under each file,
// the functions in which a statement ran, to say why the file is there.
//
//	cd bench && go run ./cmd/paths [-funcs]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/dwellhttp/dwell/"

func main() {
	funcs := flag.Bool("funcs", false, "list, under each file, the functions in which a statement ran")
	flag.Parse()
	work, err := os.MkdirTemp("", "dwell-paths-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	probe := filepath.Join(work, "probe")
	run("go", "build", "-cover", "-covermode=atomic", "-coverpkg="+module+"...", "-o", probe, "./cmd/paths/probe")
	for _, ex := range []struct{ name, what string }{
		{"h1", "one HTTP/1.1 request"},
		{"h2", "one HTTP/2 stream's request (h2c)"},
		{"ws", "one WebSocket message, echoed (event style)"},
		{"ws-seq", "one WebSocket message, echoed (sequential style)"},
	} {
		dir := filepath.Join(work, ex.name)
		cmd := exec.Command(probe, ex.name, dir)
		cmd.Env = append(os.Environ(), "GOCOVERDIR="+work) // the probe's own exit data, unused
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("probe %s: %v", ex.name, err)
		}
		text := filepath.Join(work, ex.name+".txt")
		run("go", "tool", "covdata", "textfmt", "-i="+dir, "-o="+text)
		files := ran(text)
		fmt.Printf("%s: %d files\n", ex.what, len(files))
		fmt.Printf("\tby layer: %s\n", byLayer(files))
		var ranIn map[string][]string
		if *funcs {
			ranIn = functions(text)
		}
		for _, f := range files {
			fmt.Printf("\t%s\n", f)
			for _, fn := range ranIn[f] {
				fmt.Printf("\t\t%s\n", fn)
			}
		}
	}
}

// ran returns the files of dwell, the probe aside, with a block of statements that ran.
func ran(profile string) []string {
	f, err := os.Open(profile)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// mode: atomic, then "path/file.go:l.c,l.c statements count"
		line := sc.Text()
		file, _, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "mode:") || strings.HasSuffix(line, " 0") {
			continue
		}
		file = strings.TrimPrefix(file, module)
		if !strings.HasPrefix(file, "bench/") {
			seen[file] = true
		}
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	sort.Strings(files)
	return files
}

// The layers of dwell a file may be of, from the bottom up.
var layers = []struct{ name, prefix string }{
	{"poller", "core/internal/netpoll/"},
	{"shared helpers", "internal/"}, // the buffer pools, the views of memory, HTTP's tables
	{"codecs", "core/internal/wire/"},
	{"codecs", "core/internal/h2/"},
	{"codecs", "websocket/internal/"},
	{"engine", "core/internal/engine/"},
	{"server", "core/internal/serve/"},
	{"HTTP/1.1", "core/internal/http1/"},
	{"HTTP/2", "core/internal/http2/"},
	{"face", "core/"},
	{"WebSocket", "websocket/"},
}

// layerOf returns the layer of dwell's file f: the one of the longest folder that holds it
// (websocket/internal/ before websocket/), or else f's top folder.
func layerOf(f string) string {
	best := ""
	for _, l := range layers {
		if strings.HasPrefix(f, l.prefix) && len(l.prefix) > len(best) {
			best = l.prefix
		}
	}
	for _, l := range layers {
		if l.prefix == best {
			return l.name
		}
	}
	dir, _, _ := strings.Cut(f, "/")
	return dir
}

// byLayer says how many of files are of each layer, from the bottom up.
func byLayer(files []string) string {
	n := map[string]int{}
	for _, f := range files {
		n[layerOf(f)]++
	}
	var parts []string
	for _, l := range layers {
		if n[l.name] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", l.name, n[l.name]))
			delete(n, l.name)
		}
	}
	rest := make([]string, 0, len(n))
	for name := range n {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range rest {
		parts = append(parts, fmt.Sprintf("%s %d", name, n[name]))
	}
	return strings.Join(parts, ", ")
}

// functions returns, by file, the functions of dwell in which a statement of profile ran
// (go tool cover -func: a function counts when its coverage is above 0).
func functions(profile string) map[string][]string {
	out, err := exec.Command("go", "tool", "cover", "-func="+profile).Output()
	if err != nil {
		log.Fatalf("go tool cover -func: %v", err)
	}
	byFile := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		// "path/file.go:line:\tname\t\tpercent%"
		f := strings.Fields(line)
		if len(f) != 3 || f[2] == "0.0%" {
			continue
		}
		file, _, ok := strings.Cut(f[0], ":")
		if !ok {
			continue
		}
		file = strings.TrimPrefix(file, module)
		byFile[file] = append(byFile[file], f[1])
	}
	return byFile
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
}
