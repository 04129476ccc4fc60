package serve

import (
	"crypto/tls"
	"log/slog"
	"runtime"
	"time"
)

// Options is core.Options, field for field: core documents them, and its TestFaceLayouts
// checks that the two are laid out alike.
type Options struct {
	Addr                   string
	Loops                  int
	MaxHeaderBytes         int
	MaxBodyBytes           int64
	WriteHighWater         int
	HeaderTimeout          time.Duration
	IdleTimeout            time.Duration
	WriteTimeout           time.Duration
	BodyTimeout            time.Duration
	MaxConns               int
	Logger                 *slog.Logger
	DisableHTTP2           bool
	DisableH2C             bool
	DisableConnectProtocol bool
	DisableDeferAccept     bool
	StallThreshold         time.Duration
	TLSConfig              *tls.Config
	WriteRefusal           func(r *Refusal)
	AllowCONNECT           bool
	Poller                 string
}

// Defaults applied by normalize; see the Options fields.
const (
	defaultAddr           = "127.0.0.1:8080"
	defaultMaxHeaderBytes = 16 << 10
	maxMaxHeaderBytes     = 1 << 20
	defaultWriteHighWater = 256 << 10
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	defaultWriteTimeout   = 30 * time.Second
	defaultBodyTimeout    = 30 * time.Second
)

// normalize returns o with every zero field replaced by its default and every negative timeout
// by zero, which the loop reads as "none".
func (o Options) normalize() Options {
	if o.Addr == "" {
		o.Addr = defaultAddr
	}
	if o.Loops <= 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	o.MaxHeaderBytes = min(o.MaxHeaderBytes, maxMaxHeaderBytes)
	if o.MaxBodyBytes < 0 {
		o.MaxBodyBytes = 0
	}
	if o.WriteHighWater <= 0 {
		o.WriteHighWater = defaultWriteHighWater
	}
	o.HeaderTimeout = timeoutOrDefault(o.HeaderTimeout, DefaultHeaderTimeout)
	o.IdleTimeout = timeoutOrDefault(o.IdleTimeout, DefaultIdleTimeout)
	o.WriteTimeout = timeoutOrDefault(o.WriteTimeout, defaultWriteTimeout)
	o.BodyTimeout = timeoutOrDefault(o.BodyTimeout, defaultBodyTimeout)
	o.StallThreshold = timeoutOrDefault(o.StallThreshold, defaultStallThreshold)
	if o.MaxConns < 0 {
		o.MaxConns = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// deferAcceptSeconds is how long a listener holds a silent connection (see DisableDeferAccept).
func (o *Options) deferAcceptSeconds() int {
	d := o.HeaderTimeout
	if d <= 0 {
		d = DefaultHeaderTimeout
	}
	return int((d + time.Second - 1) / time.Second)
}

func timeoutOrDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
