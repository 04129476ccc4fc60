package serve

import "strconv"

// Refuse answers the request with status in the server's refusal format, when the application
// gave one (Options.WriteRefusal), and reports whether it did: the answer then has the body and
// header fields WriteRefusal writes for a Refusal of status, err and this Ctx, so that what a
// handler or middleware refuses — a router's 404 and 405, a request without a session — reads
// like what the server refuses itself (a JSON API's 404 in JSON, as its 413). err says what was
// wrong, in words fit for the client (middleware.RefusalMessage shows its text, without
// "dwell: "). Without a WriteRefusal, once the response has started, when the request can no
// longer be answered, or when WriteRefusal panics (which is logged), Refuse writes nothing and
// reports false: the caller then answers its own way, as it did before.
//
// What the handler prepared gives way, as it does to the server's own answers: the body held so
// far, a body filter (Seam.WrapBody), and the header fields that describe the content
// (Content-Type, Content-Encoding, caching); the other fields set so far stay (Allow, a request
// id, CORS, WWW-Authenticate). Unlike the server's own refusals, the response keeps the
// connection open, as any handler's response does. Write nothing after it. status is a 4xx or
// 5xx; anything else panics, since it is a programming error.
func (cx *Ctx) Refuse(status int, err error) bool {
	cx.check("Refuse")
	if status < 400 || status > 599 {
		panic("dwell: Ctx.Refuse with status " + strconv.Itoa(status) + ": a refusal is a 4xx or 5xx")
	}
	l := cx.Loop
	if l == nil || l.Opts.WriteRefusal == nil || cx.Resp&RfCommitted != 0 || cx.writeErr() != nil {
		return false
	}
	r := &Refusal{Status: status, Err: err, Ctx: cx}
	if !l.shape(r) {
		return false
	}
	// As errorResponse does, less the close: the request was the handler's to answer, and it
	// did, so the connection goes on as after any response.
	c := cx.Carrier
	pool := &l.Pool
	cx.dropRepresentation()
	if x := cx.Extra; x != nil && x.Rare != nil {
		x.Rare.filter = nil // a filter would go on writing (a compressor's trailer) after the answer
	}
	c.Out.DropAfterHead(pool)
	c.Out.ReserveHead(pool)
	cx.Status = uint16(status)
	if r.typeSet {
		cx.addField("Content-Type", r.contentType, fieldContentType)
	}
	for i := 0; i+1 < len(r.fields); i += 2 {
		// Set, not added, as Refusal.SetHeader sets: a field the handler set under the same
		// name is the refusal's now.
		cx.delField(r.fields[i], fieldPlain)
		cx.appendField(r.fields[i], r.fields[i+1])
	}
	if cx.ReqFlags&reqHead == 0 {
		c.Out.Write(pool, r.body)
	}
	cx.Written = int64(len(r.body)) // HEAD's too: its Content-Length is the body's
	return true
}
