package peer

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
)

// TLSFlags is the command line of the servers that take part in the HTTPS figures (dwell and
// net/http): -cert and -key name the PEM certificate and key to serve HTTPS with, -curves the
// key exchange. Without -cert the server serves plaintext, as before.
type TLSFlags struct {
	// Cert and Key are PEM files (the driver generates an ECDSA P-256 pair for the run).
	Cert, Key string
	// Curves is "x25519" (X25519 only, what nginx is configured with) or "default" (Go's own
	// preferences, X25519MLKEM768 first).
	Curves string
}

// RegisterTLSFlags defines -cert, -key and -curves on the command line. Call it before
// ParseFlags.
func RegisterTLSFlags() *TLSFlags {
	t := &TLSFlags{}
	flag.StringVar(&t.Cert, "cert", "", "PEM certificate: serve HTTPS with it (with -key)")
	flag.StringVar(&t.Key, "key", "", "PEM private key of -cert")
	flag.StringVar(&t.Curves, "curves", "x25519", "TLS key exchange with -cert: x25519, or default (Go's, X25519MLKEM768 first)")
	return t
}

// Enabled reports whether the server is to serve HTTPS.
func (t *TLSFlags) Enabled() bool { return t.Cert != "" || t.Key != "" }

// Config returns the tls.Config the server serves with, without its certificate (the servers
// load -cert and -key with their ListenAndServeTLS): session tickets on (crypto/tls's
// default), the key exchange -curves names. TLS 1.3's cipher suite is crypto/tls's choice,
// TLS_AES_128_GCM_SHA256 on a CPU with AES instructions when the client offers it. A bad
// command line is fatal.
func (t *TLSFlags) Config() *tls.Config {
	if t.Cert == "" || t.Key == "" {
		fmt.Fprintln(os.Stderr, "-cert and -key go together")
		os.Exit(2)
	}
	cfg := &tls.Config{}
	switch strings.ToLower(t.Curves) {
	case "x25519":
		cfg.CurvePreferences = []tls.CurveID{tls.X25519}
	case "default", "":
	default:
		fmt.Fprintf(os.Stderr, "-curves %q: x25519 or default\n", t.Curves)
		os.Exit(2)
	}
	return cfg
}

// ReadyTLS is Ready for a server that serves HTTPS.
func ReadyTLS(addr string) {
	ready("https", addr)
}
