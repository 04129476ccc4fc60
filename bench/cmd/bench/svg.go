package main

import (
	"fmt"
	"html"
	"strings"
)

// chartSVG draws perf.svg by hand: two bar charts, server CPU per keep-alive request and memory
// per idle connection, each bar the median with a min–max whisker. Plain SVG keeps the driver
// free of plotting tools and renders on GitHub as it is.
func chartSVG(res *Results) string {
	const w = 760
	h := 330
	ws := res.figure("ws-echo") != nil || res.figure("ws-idle") != nil
	if ws {
		h = 660 // a second row: the WebSocket echo's CPU and idle memory
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	panel(&b, res, "hello", "cpu_us", "Server CPU per keep-alive request, µs", 0, 0)
	panel(&b, res, "idle", "kib", "Server memory per idle connection, KiB", w/2, 0)
	if ws {
		panel(&b, res, "ws-echo", "cpu_us", "WebSocket: server CPU per 1 KiB echo, µs", 0, 330)
		panel(&b, res, "ws-idle", "kib", "WebSocket: memory per idle connection, KiB", w/2, 330)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// panel draws one chart in the 380×330 box at (x0, y0).
func panel(b *strings.Builder, res *Results, figID, metricID, title string, x0, y0 int) {
	const (
		pw, left = 380, 50
		plotW    = pw - left - 20
		plotH    = 280 - 50
	)
	top, bottom := y0+50, y0+280
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", x0+10, y0+20, html.EscapeString(title))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" fill="#555">median of the rounds, whisker min–max; lower is better</text>`+"\n", x0+10, y0+34)
	f := res.figure(figID)
	var mt *Metric
	if f != nil {
		mt = f.metric(metricID)
	}
	if mt == nil || len(mt.Summary) == 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#666">not measured in this run</text>`+"\n", x0+left, top+plotH/2)
		return
	}
	var servers []string
	maxV := 0.0
	for _, s := range f.columns(res.Servers) {
		if sum, ok := mt.Summary[s]; ok {
			servers = append(servers, s)
			maxV = max(maxV, sum.Max, sum.Median)
		}
	}
	scale := niceCeil(maxV * 1.1)
	y := func(v float64) float64 { return float64(bottom) - v/scale*plotH }
	// Axis with four gridlines.
	for i := 0; i <= 4; i++ {
		v := scale * float64(i) / 4
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0+left, x0+left+plotW, y(v), y(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", x0+left-6, y(v)+4, trimZeros(v))
	}
	slot := float64(plotW) / float64(len(servers))
	bw := slot * 0.6
	for i, s := range servers {
		sum := mt.Summary[s]
		cx := float64(x0+left) + slot*(float64(i)+0.5)
		color := "#5c7cfa"
		switch {
		case strings.HasPrefix(s, "dwell"):
			color = "#e8590c"
		case s == "gnet" || s == "uring-floor" || s == "floor":
			// The floor, not a server: drawn apart from the peers.
			color = "#adb5bd"
		}
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
			cx-bw/2, y(sum.Median), bw, float64(bottom)-y(sum.Median), color)
		if sum.N > 1 {
			fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#222"/>`+"\n", cx, cx, y(sum.Min), y(sum.Max))
			for _, v := range []float64{sum.Min, sum.Max} {
				fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#222"/>`+"\n", cx-5, cx+5, y(v), y(v))
			}
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", cx, y(max(sum.Max, sum.Median))-5, fmtNum(sum.Median, mt.Digits))
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", cx, bottom+16, html.EscapeString(s))
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#222"/>`+"\n", x0+left, x0+left+plotW, bottom, bottom)
	if f.Failed != nil || len(servers) < len(f.columns(res.Servers)) {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#666" font-size="11">servers without a bar: absent or failed (see performance.md)</text>`+"\n", x0+left, bottom+34)
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, for readable gridlines.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimZeros(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
