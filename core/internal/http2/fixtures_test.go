package http2

// measureStallThreshold turns the stall detector off in the servers whose memory is measured.
// On a loaded machine code that waits for a CPU can outlast the threshold, and what the
// detector then takes to look into it (a goroutine profile, a note with a stack, a log line) is
// heap that no parked request holds, there or not with the scheduling. (A detector that dumped
// every goroutine's stack, 2 MB with 2,000 parked coroutines, and held it until its loop logged
// it, put the coroutine figure 1 KB per request over its budget in 2 runs of 128 under load.)
const measureStallThreshold = -1
