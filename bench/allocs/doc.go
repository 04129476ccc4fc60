// Package allocs measures allocations per request on the hello path for dwell and its peers,
// each serving in this process while a client that allocates nothing sends keep-alive requests:
//
//	go test -run '^$' -bench Hello -benchmem ./allocs/
//
// The driver (cmd/bench) runs it for the allocations row of docs/performance.md.
package allocs
