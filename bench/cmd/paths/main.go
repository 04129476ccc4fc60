// Command paths counts the files of dwell that one exchange passes through: one HTTP/1.1
// request, one HTTP/2 stream's request, one WebSocket message (echoed, in each of the two
// styles: the event style, websocket.Serve, which make bench's echo uses, and the sequential
// one, a handler reading and writing). It builds ./probe with
// coverage of every dwell package, runs it once for each exchange — the probe warms the
// connection up, clears the counters and makes the exchange once more — and lists, for each,
// the files of dwell in which a statement ran, the probe's own aside. A file counts once
// whatever ran in it: a helper of one line counts as the file it is in. With -funcs it lists,
// under each file, the functions in which a statement ran, to say why the file is there.
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
