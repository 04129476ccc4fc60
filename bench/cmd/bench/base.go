package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// -base REV: dwell measured against another revision of its own repository in the same run,
// so that a change is compared with the code before it under the same machine's noise. The
// driver resolves REV to a commit, checks it out into a git worktree under the work directory,
// builds that tree's bench/servers/dwell in that tree's bench module (whose go.mod replaces
// github.com/dwellhttp/dwell with ../, so that the binary holds the base tree's dwell), removes
// the worktree again, and measures the binary as the contender dwell-base in every HTTP/1.1,
// HTTPS and HTTP/2 figure dwell is measured in: in the same rounds, right after dwell in the
// servers' turns. The report gives dwell's figures over dwell-base's in a section of its own.

const (
	// baseName is the contender -base adds: dwell built from the base revision.
	baseName = "dwell-base"
	// baseOf is the contender it is measured against, and whose figures it takes part in.
	baseOf = "dwell"
	// dwellModule is the module the base tree's bench module must resolve to the base tree.
	dwellModule = "github.com/dwellhttp/dwell"
)

// measuredAs is the contender whose figures a server takes part in: dwell's for dwell-base and
// for a server that runs dwell's binary with variables of its own (startedWith: dwell-uring),
// its own for the others.
func measuredAs(name string) string {
	if name == baseName {
		return baseOf
	}
	if st, ok := startedWith[name]; ok {
		return st.of
	}
	return name
}

// byOrder compares two contenders by their places in order, dwell-base right after dwell, so
// that the two are measured one after the other in every round's turns. dwell-uring has its own
// place in order, right after dwell's, so that with -base it comes right after dwell-base.
func byOrder(order []string) func(a, b string) int {
	rank := func(s string) int {
		if s == baseName {
			return 2*slices.Index(order, baseOf) + 1
		}
		return 2 * slices.Index(order, s)
	}
	return func(a, b string) int { return rank(a) - rank(b) }
}

// withBase is list with dwell-base right after dwell when dwell is in it, list itself otherwise.
func withBase(list []string) []string {
	if !slices.Contains(list, baseOf) || slices.Contains(list, baseName) {
		return list
	}
	i := slices.Index(list, baseOf)
	return slices.Insert(slices.Clone(list), i+1, baseName)
}

// addBase adds dwell-base to the contender lists that hold dwell, and refuses a -base under
// which it would be measured in no figure: the run would compare nothing.
func (c *config) addBase() error {
	if strings.HasPrefix(c.base, "-") {
		return fmt.Errorf("-base %q: not a revision", c.base)
	}
	c.servers = withBase(c.servers)
	c.h2 = withBase(c.h2)
	http := slices.Contains(c.servers, baseName) && hasHTTP(c.figures)
	h2 := slices.Contains(c.h2, baseName) && hasH2(c.figures)
	if !http && !h2 {
		return fmt.Errorf("-base %s: dwell is measured in none of the figures asked for "+
			"(-servers holds the HTTP/1.1 and HTTPS figures' contenders, -h2 the HTTP/2 ones')", c.base)
	}
	return nil
}

// baseTree is the base revision and the server built from it.
type baseTree struct {
	// rev is -base as given; commit the commit it named.
	rev, commit string
	// repo is the repository's top level, where the worktree is registered; dir the worktree.
	repo, dir string
	// bin is dwell-base's binary, in the work directory's bin beside the others.
	bin string
}

// version is dwell-base's line in the report's setup.
func (b *baseTree) version() string {
	return fmt.Sprintf("%s at %s (-base %s)", dwellModule, b.commit, b.rev)
}

// worktreeAdd is the command that checks commit out into dir, a new worktree of repo, with a
// detached HEAD: no branch is made.
func worktreeAdd(repo, dir, commit string) []string {
	return []string{"git", "-C", repo, "worktree", "add", "--detach", dir, commit}
}

// worktreeRemove are the commands that remove it again: the worktree, even if something was
// written into it, then what git keeps of worktrees whose directory is gone.
func worktreeRemove(repo, dir string) [][]string {
	return [][]string{
		{"git", "-C", repo, "worktree", "remove", "--force", dir},
		{"git", "-C", repo, "worktree", "prune"},
	}
}

// buildBase resolves -base to a commit, checks it out into $WORK/base, builds dwell-base from
// it with dwell's package and tags, and removes the worktree before it returns, whether the
// build went through or not: the binary is all the run needs.
func (r *runner) buildBase(ctx context.Context) error {
	repo, err := r.output(ctx, "", "git", "-C", r.benchDir, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	// The commit is resolved once, so that a branch or HEAD that moves during the run does
	// not change what is measured.
	commit, err := r.output(ctx, "", "git", "-C", repo, "rev-parse", "--verify", "--quiet", r.cfg.base+"^{commit}")
	if err != nil {
		return fmt.Errorf("not a commit of %s", repo)
	}
	pkg, tags := serverPackage(baseOf)
	b := &baseTree{rev: r.cfg.base, commit: commit, repo: repo, dir: filepath.Join(r.work, "base"),
		bin: filepath.Join(r.work, "bin", baseName)}
	r.logf("checking out %s (%s) into %s", b.rev, b.commit, b.dir)
	defer r.removeWorktree(b)
	if _, err := r.output(ctx, "", worktreeAdd(b.repo, b.dir, b.commit)...); err != nil {
		return err
	}
	bench := filepath.Join(b.dir, "bench")
	if goFiles, _ := filepath.Glob(filepath.Join(bench, "servers", pkg, "*.go")); len(goFiles) == 0 {
		return fmt.Errorf("%s has no bench/servers/%s", b.commit, pkg)
	}
	// The base tree's bench module must build the base tree's dwell: a go.work, or a GOWORK
	// naming this tree, would hand it this tree's instead and the two would be the same code.
	dir, err := r.output(ctx, bench, "go", "list", "-m", "-f", "{{.Dir}}", dwellModule)
	if err != nil {
		return err
	}
	if !sameDir(dir, b.dir) {
		return fmt.Errorf("the base tree's bench module takes %s from %s, not from %s", dwellModule, dir, b.dir)
	}
	if err := os.MkdirAll(filepath.Dir(b.bin), 0o755); err != nil {
		return err
	}
	if err := r.goBuildIn(ctx, bench, b.bin, "./servers/"+pkg, tags); err != nil {
		return fmt.Errorf("building %s: %w", baseName, err)
	}
	r.base = b
	r.meta.Base = &BaseRevision{Rev: b.rev, Commit: b.commit}
	return nil
}

// removeWorktree removes the base worktree. It runs after an interrupt too, so it does not
// take the run's context.
func (r *runner) removeWorktree(b *baseTree) {
	for i, argv := range worktreeRemove(b.repo, b.dir) {
		if _, err := os.Stat(b.dir); i == 0 && err != nil {
			continue // never added: there is nothing to remove, only to prune
		}
		if _, err := r.output(context.Background(), "", argv...); err != nil {
			r.logf("removing the base worktree: %v", err)
		}
	}
}

// output runs argv in dir ("" for the driver's own) and returns what it printed on stdout,
// trimmed; an error carries what it printed on stderr.
func (r *runner) output(ctx context.Context, dir string, argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := r.procs.run(ctx, cmd); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// sameDir reports whether a and b name the same directory, through symbolic links.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// baseRow is a row of the section against the base revision: one figure's metric.
type baseRow struct{ fig, metric, label string }

// baseRows are that section's rows: those of the summaries (each figure's main metrics, but
// the allocations, which dwell-base sits out) and, for each abuse figure, the server's RSS
// growth and the normal client's p99.
func baseRows() []baseRow {
	var rows []baseRow
	for _, row := range summaryRows {
		if row.fig != "allocs" {
			rows = append(rows, baseRow{row.fig, row.metric, row.label})
		}
	}
	for _, row := range tlsSummaryRows {
		rows = append(rows, baseRow{row.fig, row.metric, row.label})
	}
	for _, row := range h2SummaryRows {
		rows = append(rows, baseRow{row.fig, row.metric, row.label})
	}
	for _, a := range abuses {
		rows = append(rows,
			baseRow{a.id, "rss_mib", "HTTP/2 abuse, " + a.name + ": server RSS growth, peak, MiB"},
			baseRow{a.id, "normal_p99_ms", "HTTP/2 abuse, " + a.name + ": normal client's p99 latency, ms"})
	}
	return rows
}

// baseSummary writes the section against the base revision: for each figure both dwell and
// dwell-base took part in, a row per main metric with both medians and dwell's over
// dwell-base's, figure by figure in the run's order.
func (r *runner) baseSummary(b *strings.Builder) {
	base := r.res.Meta.Base
	if base == nil {
		return
	}
	lines := r.pairLines(baseRows(), baseOf, baseName, baseOf, baseName)
	if len(lines) == 0 {
		return
	}
	build := "`" + worktreeAddCommand(base.Commit) + "`, then `" + baseBuildCommand() + "` in `$WORK/base/bench`"
	fmt.Fprintf(b, "## Against the base revision %s (%s)\n\n", base.Rev, base.Commit)
	fmt.Fprintf(b, "dwell built from this tree (`%s`) beside dwell built from %s, commit %s (`%s`), in the same "+
		"run: the same figures and rounds, %s right after %s in the servers' turns, so that both meet the same "+
		"state of the machine. %s is that commit's `bench/servers/%s`, built in a git worktree of it (%s, whose "+
		"go.mod the driver checks resolves %s to that tree; the worktree is removed once the binary is built). "+
		"Each row gives both medians (with the range when there are several rounds) and %s's value over %s's "+
		"in the same round: the median of the per-round ratios, then each round's. Below 1.00× dwell spends "+
		"less CPU, time or memory than its base; for requests, connections or bytes per second, above 1.00× it "+
		"does more. Where a ratio would mean nothing (RSS growth, the share of handshakes resumed, and the abuse "+
		"figures, measured once against targets) the difference of the medians is given instead. A ratio within the rounds' ranges is the "+
		"machine's noise, not the change's.",
		baseOf, base.Rev, base.Commit, baseName, baseName, baseOf, baseName, baseOf, build, dwellModule, baseOf, baseName)
	if r.res.Meta.Rounds == 1 {
		b.WriteString(" With one round each ratio is that round's alone: enough to see the comparison run, not to judge a change.")
	}
	fmt.Fprintf(b, "\n\n| figure | %s | %s | %s ÷ %s |\n|---|---|---|---|\n", baseOf, baseName, baseOf, baseName)
	for _, l := range lines {
		b.WriteString(l)
	}
	b.WriteString("\n")
}

// worktreeAddCommand is worktreeAdd as the report shows it, run in the repository.
func worktreeAddCommand(commit string) string {
	return "git " + strings.Join(worktreeAdd("", "$WORK/base", commit)[3:], " ")
}

// baseBuildCommand is dwell-base's go build, as the report shows it: dwell's package and tags.
func baseBuildCommand() string {
	pkg, tags := serverPackage(baseOf)
	return "go " + strings.Join(goBuildArgs("$WORK/bin/"+baseName, "./servers/"+pkg, tags), " ")
}

// pairLines returns the table rows of a section that sets two servers side by side, left and
// right: for each figure both took part in, a row of rows for each of its metrics there, with
// both medians and srv's value over ref's (pairRatioCell; srv and ref are left and right in
// either order), figure by figure in the run's order.
func (r *runner) pairLines(rows []baseRow, left, right, srv, ref string) []string {
	var lines []string
	for _, f := range r.res.Figures {
		cols := f.columns(r.res.Servers)
		_, leftAbsent := f.Absent[left]
		_, rightAbsent := f.Absent[right]
		if !slices.Contains(cols, left) || !slices.Contains(cols, right) || leftAbsent || rightAbsent {
			continue
		}
		for _, row := range rows {
			mt := f.metric(row.metric)
			if row.fig != f.ID || mt == nil {
				continue
			}
			lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s |\n", row.label,
				cellFull(f, mt, left), cellFull(f, mt, right), pairRatioCell(f, mt, srv, ref)))
		}
	}
	return lines
}

// pairRatioCell is srv's value over ref's, "median× (round 1 · round 2 · ...)", or for a metric
// without ratios the difference of their medians.
func pairRatioCell(f *Figure, mt *Metric, srv, ref string) string {
	if !noRatio[mt.ID] {
		return versusCell(f, mt, srv, ref)
	}
	s, ok1 := mt.Summary[srv]
	r, ok2 := mt.Summary[ref]
	if !ok1 || !ok2 {
		if len(f.Failed[srv])+len(f.Failed[ref]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	return strings.TrimSpace(fmt.Sprintf("%+.*f %s", mt.Digits, s.Median-r.Median, mt.Unit)) + " (difference)"
}
