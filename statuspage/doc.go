// Package statuspage is a live status page for a dwell server: its connections by state, per
// loop and in all, requests per second, the server's own refusals by status, stalls and the
// longest turn, TLS handshakes, bytes in and out, and the Go runtime's memory and goroutines,
// with a chart of requests per second and open connections over the last minute.
//
// Nothing is served unless the application mounts the handler, where it wants it and behind
// whatever guards it its other debugging endpoints (the page tells anyone who can read it how
// busy the server is):
//
//	r := router.New()
//	var status core.Handler
//	r.GET("/debug/dwell", func(c *core.Ctx) { status(c) })
//	s := core.NewServer(r.Handler(), core.Options{Addr: ":8080"})
//	status = statuspage.Handler(s, statuspage.Options{}) // before the server starts
//	s.ListenAndServe()
//
// The indirection is there because the handler reads the server it is part of: the router is
// frozen once core.NewServer has its handler, and the server exists only after that.
//
// # What it answers
//
// One path serves three representations, chosen by the Accept field (or the format query
// parameter, which wins):
//
//   - the page, HTML (format=html, and the default: a browser's Accept, */*, none), whose
//     script and style the same handler serves at ?asset=app.js and ?asset=style.css;
//   - one Snapshot as JSON (Accept: application/json, or format=json), for machines;
//   - a stream of Snapshots as Server-Sent Events (Accept: text/event-stream, or format=sse),
//     an event "snapshot" every Options.Interval, which the page follows with an EventSource.
//
// Every answer has Cache-Control: no-store and X-Content-Type-Options: nosniff; the page has a
// Content-Security-Policy that allows its own script, style and stream, from the same origin,
// and nothing else: it loads nothing from elsewhere and works offline. The page builds its DOM
// with textContent alone, never from HTML. Methods other than GET and HEAD get 405 with Allow.
//
// # Costs
//
// A snapshot calls core.Server.Stats, which copies each loop's counters on that loop and counts
// its connections (a walk of its connection table), and reads runtime/metrics, which does not
// stop the world as runtime.ReadMemStats does. From a handler, Stats parks that handler alone
// while the other loops answer, a turn of theirs at most. A stream is one parked request per
// open page, that wakes once an interval: it parks in its coroutine (wait.Sleep) rather than
// detaching, because Stats can wait for the other loops' copies only from a handler — from a
// continuation it would report them as they were at the previous event, marked stale.
package statuspage
