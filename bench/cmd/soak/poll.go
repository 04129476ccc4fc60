package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// A poller follows the server's topic with long polls, and checks that it gets every value,
// in order: the values are 1, 2, 3..., each its own sequence number.
type poller struct {
	c     *http.Client
	base  string
	proto string
	after uint64
}

func (p *poller) poll(ctx context.Context, t *tally) {
	what := "long poll (" + p.proto + ")"
	resp, b, err := get(ctx, p.c, "GET", p.base+"/poll?after="+strconv.FormatUint(p.after, 10), nil)
	if err != nil {
		if ctx.Err() == nil {
			t.fail(what, err)
		}
		return
	}
	next, _ := strconv.ParseUint(resp.Header.Get("X-Next"), 10, 64)
	if resp.StatusCode == 204 {
		if next != p.after {
			t.fail(what, fmt.Errorf("nothing new, and a cursor of %d after %d", next, p.after))
		}
		t.ok.Add(1)
		return
	}
	var vs []uint64
	if err := json.Unmarshal(b, &vs); err != nil || len(vs) == 0 {
		t.fail(what, fmt.Errorf("status %d, body %.60q: %v", resp.StatusCode, b, err))
		return
	}
	if p.after != 0 && vs[0] != p.after+1 {
		t.fail(what, fmt.Errorf("values lost: after %d came %d", p.after, vs[0]))
	}
	for i := 1; i < len(vs); i++ {
		if vs[i] != vs[i-1]+1 {
			t.fail(what, fmt.Errorf("values lost: %d, then %d", vs[i-1], vs[i]))
		}
	}
	if next != vs[len(vs)-1] {
		t.fail(what, fmt.Errorf("a cursor of %d after values up to %d", next, vs[len(vs)-1]))
	}
	p.after = next
	t.ok.Add(1)
}
