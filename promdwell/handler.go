package promdwell

import (
	"bytes"
	"net/http"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Handler serves the metrics g gathers in the exposition format the scraper asks for (its
// Accept field; the text format by default). Gathering runs off the loop (wait.Do) and the
// handler parks meanwhile: collectors may block — a Collector waits for each loop's copy of its
// statistics, the loop serving the scrape among them — which a handler on the loop must not.
// A gathering error answers 500 with what failed, unless some metrics were gathered: those are
// served, as promhttp does with ContinueOnError.
func Handler(g prometheus.Gatherer) core.Handler {
	return func(c *core.Ctx) {
		format := expfmt.NegotiateAccept(http.Header{"Accept": {c.Header("Accept")}}, expfmt.DefaultAcceptedFormats()...)
		var buf bytes.Buffer
		var gerr error
		if err := wait.Do(c, func() {
			mfs, err := g.Gather()
			gerr = err
			enc := expfmt.NewEncoder(&buf, format)
			for _, mf := range mfs {
				if err := enc.Encode(mf); err != nil {
					gerr = err
					return
				}
			}
			if cl, ok := enc.(expfmt.Closer); ok {
				cl.Close()
			}
		}); err != nil {
			return // the client left, or the server is shutting down
		}
		if gerr != nil && buf.Len() == 0 {
			c.SetStatus(500)
			c.SetHeader("Content-Type", "text/plain; charset=utf-8")
			c.WriteString("gathering the metrics failed: " + gerr.Error() + "\n")
			return
		}
		c.SetHeader("Content-Type", string(format))
		c.Write(buf.Bytes())
	}
}
