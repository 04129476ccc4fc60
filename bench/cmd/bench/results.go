package main

import (
	"encoding/json"
	"math"
	"os"
	"slices"
)

// Results is everything a run measured; the driver writes it as perf.json so a later run can be
// compared with this one, sample by sample.
type Results struct {
	Meta    Meta     `json:"meta"`
	Servers []string `json:"servers"`
	// WSServers are the WebSocket figures' contenders, in report order.
	WSServers []string          `json:"ws_servers,omitempty"`
	Skipped   map[string]string `json:"skipped,omitempty"`
	// FellBack lists the servers of startedWith that logged they could not do what their
	// variables asked (startedwith.go), by name.
	FellBack map[string]*FellBack `json:"fell_back,omitempty"`
	Figures  []*Figure            `json:"figures"`
}

// Meta describes the machine, the tools and the settings of a run.
type Meta struct {
	Date       string            `json:"date"`
	Command    string            `json:"command"`
	Quick      bool              `json:"quick"`
	Rounds     int               `json:"rounds"`
	WrkSeconds int               `json:"wrk_seconds"`
	XferBytes  int64             `json:"transfer_bytes"`
	Conns      int               `json:"conns"`
	CPUs       int               `json:"cpus"`
	CPUModel   string            `json:"cpu_model"`
	Kernel     string            `json:"kernel"`
	GoVersion  string            `json:"go_version"`
	MemTotal   string            `json:"mem_total"`
	Versions   map[string]string `json:"versions"`
	Seconds    float64           `json:"seconds"`
	// Base is the revision dwell was measured against (-base), when it was.
	Base *BaseRevision `json:"base,omitempty"`
}

// BaseRevision is the -base revision as given and the commit it named when the run began.
type BaseRevision struct {
	Rev    string `json:"rev"`
	Commit string `json:"commit"`
}

// Figure is one measurement (hello keep-alive, idle memory, ...) over every server and round.
type Figure struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Commands are the commands of the figure's first measurement, with the run's temporary
	// paths, port and pid replaced by $WORK, $PORT and $PID.
	Commands []string  `json:"commands"`
	Metrics  []*Metric `json:"metrics"`
	// Absent lists servers that do not take part, with the reason.
	Absent map[string]string `json:"absent,omitempty"`
	// Failed lists measurements that failed, by server, with the error.
	Failed map[string][]string `json:"failed,omitempty"`
	// Servers are the figure's columns when they are not the run's (the WebSocket figures),
	// and Peers those of them a metric's best peer is chosen among.
	Servers []string `json:"servers,omitempty"`
	Peers   []string `json:"peers,omitempty"`
	// Notes say something of a server under the table (the extension it agreed to).
	Notes map[string]string `json:"notes,omitempty"`
	// Refs are the servers the ratios are taken against when not the run's references (the
	// HTTP/2 figures': dwell).
	Refs []string `json:"refs,omitempty"`
}

// Metric is one number of a figure, sampled once per round for each server.
type Metric struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Unit  string `json:"unit"`
	// Digits is how many decimals the report shows.
	Digits int `json:"digits"`
	// Better is "lower" or "higher" for a metric whose ratios go to the figure's best peer
	// (Best, the peer with the best median), empty for the others.
	Better  string              `json:"better,omitempty"`
	Best    string              `json:"best,omitempty"`
	Samples map[string][]Sample `json:"samples"`
	Summary map[string]Summary  `json:"summary"`
}

// Sample is one round's value.
type Sample struct {
	Round int     `json:"round"`
	Value float64 `json:"value"`
}

// Summary condenses a server's samples.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Ratios holds the ratios to each reference server that measured the metric, by its name.
	Ratios map[string]Ratio `json:"ratios,omitempty"`
}

// Ratio is a server's value over a reference's in the same round, for each round both have, and
// the median of those. Pairing within a round cancels drift that affects every server alike
// (another tenant, thermal throttling).
type Ratio struct {
	Median float64  `json:"median"`
	Rounds []Sample `json:"rounds"`
}

// baseline is the server of the ratios in the summary and the figure tables; every run measures it.
const baseline = "nethttp"

// references are the servers the ratios are taken against: net/http, and nginx and fasthttp,
// the cheapest general-purpose servers among the peers.
var references = []string{baseline, "nginx", "fasthttp"}

// ratio returns the median ratio to ref, if there is one.
func (s Summary) ratio(ref string) (float64, bool) {
	q, ok := s.Ratios[ref]
	return q.Median, ok
}

func (f *Figure) metric(id string) *Metric {
	for _, m := range f.Metrics {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (f *Figure) fail(server, msg string) {
	if f.Failed == nil {
		f.Failed = map[string][]string{}
	}
	f.Failed[server] = append(f.Failed[server], msg)
}

func (m *Metric) add(server string, round int, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if m.Samples == nil {
		m.Samples = map[string][]Sample{}
	}
	m.Samples[server] = append(m.Samples[server], Sample{Round: round, Value: v})
}

// summarize fills in every metric's Summary.
func (r *Results) summarize() {
	for _, f := range r.Figures {
		for _, m := range f.Metrics {
			m.Best = m.bestPeer(f.Peers)
			m.Summary = map[string]Summary{}
			for srv, ss := range m.Samples {
				if len(ss) == 0 {
					continue
				}
				vals := make([]float64, len(ss))
				for i, s := range ss {
					vals[i] = s.Value
				}
				sum := Summary{N: len(vals), Median: median(vals), Min: slices.Min(vals), Max: slices.Max(vals)}
				refs := references
				if len(f.Refs) > 0 {
					refs = f.Refs
				}
				if m.Best != "" {
					refs = []string{m.Best}
				}
				if srv == baseOf {
					// dwell over its base revision, for the section of their own (base.go).
					refs = append(slices.Clone(refs), baseName)
				}
				if st, ok := startedWith[srv]; ok && !slices.Contains(refs, st.of) {
					// dwell-uring over dwell, for the section of their own (startedwith.go).
					refs = append(slices.Clone(refs), st.of)
				}
				for _, ref := range refs {
					if q, ok := m.ratio(ss, ref); ok {
						if sum.Ratios == nil {
							sum.Ratios = map[string]Ratio{}
						}
						sum.Ratios[ref] = q
					}
				}
				m.Summary[srv] = sum
			}
		}
	}
}

// bestPeer returns the peer with the best median of the metric, "" when the metric has no
// direction or no peer measured it.
func (m *Metric) bestPeer(peers []string) string {
	if m.Better == "" {
		return ""
	}
	best, bestV := "", 0.0
	for _, p := range peers {
		ss := m.Samples[p]
		if len(ss) == 0 {
			continue
		}
		vals := make([]float64, len(ss))
		for i, s := range ss {
			vals[i] = s.Value
		}
		v := median(vals)
		if best == "" || (m.Better == "lower" && v < bestV) || (m.Better == "higher" && v > bestV) {
			best, bestV = p, v
		}
	}
	return best
}

// ratio divides samples by ref's samples of the same rounds.
func (m *Metric) ratio(samples []Sample, ref string) (Ratio, bool) {
	// A reference that rounds to zero at the metric's precision (0.0 MiB of RSS growth) would
	// turn noise into huge ratios; those rounds get none.
	tiny := 0.5 * math.Pow10(-m.Digits)
	base := map[int]float64{}
	for _, s := range m.Samples[ref] {
		if math.Abs(s.Value) >= tiny {
			base[s.Round] = s.Value
		}
	}
	var q Ratio
	var vals []float64
	for _, s := range samples {
		if b, ok := base[s.Round]; ok {
			q.Rounds = append(q.Rounds, Sample{Round: s.Round, Value: s.Value / b})
			vals = append(vals, s.Value/b)
		}
	}
	if len(vals) == 0 {
		return q, false
	}
	q.Median = median(vals)
	return q, true
}

// median of an even count is the mean of the middle two.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (r *Results) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
