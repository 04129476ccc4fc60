//go:build linux && !dwell_portable

package wait

// portablePoller reports whether the tests run on core's portable poller (every system but
// Linux, and Linux with the build tag dwell_portable), which gives each connection a reader and
// a writer goroutine of its own.
const portablePoller = false
