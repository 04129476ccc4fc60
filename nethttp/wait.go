package nethttp

// Calls that wait for the client. A handler behind the bridge that reads r.Body while the
// client has sent nothing more, or writes while the client takes nothing, waits on its loop
// (ReadBody, Write, Flush or SendFile parks the dwell handler) for as long as the client
// likes: BodyTimeout and WriteTimeout measure progress, so a byte every few seconds keeps
// such a wait going for ever. Its goroutine does nothing meanwhile; holding a place in the
// pool, it would let a few slow clients stop every bridged route. So the exchange gives up its
// place while the call waits, and takes one again once the call is over (workers.Pool.Leave and
// Rejoin).
//
// Whether a call waits is known only on the loop, inside the call: core parks the dwell
// handler when the socket has nothing to read or no room to write. So the handler arms a loop
// timer due at once before the call and stops it after. A call that completes without parking
// stops it before the loop could run it (the loop runs timers only between handlers' turns); a
// call that parks ends the handler's turn, and the loop fires the timer the next time it runs
// its timers: the exchange then gives up its place, and the call's answer says so
// (call.waited). A call that does not wait costs the arming and stopping of the timer, under
// 100 ns on the loop beside the microseconds of the call's two crossings, and the goroutine's
// check of one flag. Giving the place up around every read or write instead, whether it waits
// or not, would cost two turns of the pool's lock per call, and under a flood it would hand
// each place on at every call: a flood of uploads whose bodies are already there would start
// a goroutine each, which is what the pool's bound is for.

// watch arms the exchange's timer before a call that may wait for the client. It runs on the
// loop, in the dwell handler. The timer is the exchange's, made on the first watch, and again
// when a recycled exchange serves another loop: a loop's timers are its own.
func (x *exchange) watch(cl *call) {
	x.serve = cl
	if x.watchdogLoop != x.loop {
		x.watchdog = x.loop.AfterFunc(0, x.onClientWait)
		x.watchdogLoop = x.loop
		return
	}
	x.watchdog.Reset(0)
}

// unwatch stops the timer once the call is over (or has panicked).
func (x *exchange) unwatch() { x.watchdog.Stop() }

// clientWaits is the timer's function: it runs on the loop while the call it watched waits for
// the client, and gives up the exchange's place in the pool for the rest of the wait. The call
// belongs to the loop's side until it is answered, so waited is the loop's to set; it is the
// call being served, or the read that waits for the body (see awaitCall).
func (x *exchange) clientWaits() {
	if x.serve.waited {
		return // a read that waits again (a write came between its waits) gave its place up once
	}
	x.serve.waited = true
	x.pool.Leave()
}
