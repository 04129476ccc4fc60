package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// ListenAndServeTLS is ListenAndServe over TLS, as net/http's: certFile and keyFile hold the
// server's certificate (followed by any intermediates) and its private key, in PEM. They may
// be empty when Options.TLSConfig has Certificates, GetCertificate or GetConfigForClient.
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	s.Mu.Lock()
	cfg, shutdown := s.opts.TLSConfig, s.shutdown
	s.Mu.Unlock()
	if shutdown {
		return ErrServerClosed // as ListenAndServe, before the certificate is looked at
	}
	if cfg == nil {
		cfg = &tls.Config{}
	} else {
		cfg = cfg.Clone()
	}
	hasCert := len(cfg.Certificates) > 0 || cfg.GetCertificate != nil || cfg.GetConfigForClient != nil
	if !hasCert || certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	s.Mu.Lock()
	s.tlsConfig = cfg
	s.Mu.Unlock()
	return s.ListenAndServe()
}

// prepareTLS makes the configuration the loops serve TLS with, from Options.TLSConfig or what
// ListenAndServeTLS made of it; with one, Options.Addr's listener speaks TLS. s.mu is held.
func (s *Server) prepareTLS() error {
	cfg := s.tlsConfig
	if cfg == nil {
		if s.opts.TLSConfig == nil {
			for _, ls := range s.Listenings[1:] {
				if ls.TLS {
					return fmt.Errorf("dwell: listener %s: %w", ls.Addr, ErrNoTLSConfig)
				}
			}
			return nil
		}
		cfg = s.opts.TLSConfig.Clone()
	}
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		return errors.New("dwell: TLSConfig has no certificate (Certificates, GetCertificate or GetConfigForClient)")
	}
	var mux, served string // the multiplexer's ALPN name, and whether it is served
	if s.mux != nil {
		mux = s.mux.ALPN()
		if !s.opts.DisableHTTP2 {
			served = mux
		}
	}
	serverDefaults(cfg, mux, served)
	if get := cfg.GetConfigForClient; get != nil {
		// The configuration a handshake gets from the application's callback replaces this one
		// whole: it gets the same defaults, on a copy, since the callback may return the same
		// configuration every time, or one the application goes on using.
		cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c, err := get(hello)
			if c == nil || err != nil {
				return c, err
			}
			c = c.Clone()
			serverDefaults(c, mux, served)
			return c, nil
		}
	}
	s.tlsConfig = cfg
	s.Listenings[0].TLS = true
	return nil
}

// serverDefaults fills in what cfg leaves to the defaults with dwell's, and reduces its ALPN
// protocols to those the server speaks: its multiplexer's first when it serves it (served: "h2"
// for HTTP/2), then "http/1.1", then any others of cfg's but the multiplexer's (mux) — a
// protocol a handler serves itself, such as "acme-tls/1".
//
// crypto/tls's own defaults for TLS 1.2 include CBC cipher suites (ECDHE with AES-CBC and
// SHA-1), which scanners report as obsolete and as LUCKY13's target. dwell's are Mozilla's
// "intermediate" profile instead: TLS 1.2 and 1.3, and in TLS 1.2 only ECDHE key exchange with
// AEAD ciphers (AES-GCM, ChaCha20-Poly1305), for ECDSA and RSA certificates alike; every
// current browser and client library has them (Internet Explorer 11 on Windows 7 and 8.1 only
// for ECDSA: Mozilla's profile serves it with RSA through DHE, which crypto/tls lacks). (TLS
// 1.3's suites are AEAD ones, and crypto/tls does not let them be chosen.) A minimum of TLS
// 1.2 is crypto/tls's own default too, but set here it holds whatever GODEBUG says
// (tls10server=1 would enable TLS 1.0 and 1.1, which have none of these suites). A field the
// application set is its choice and is kept.
func serverDefaults(cfg *tls.Config, mux, served string) {
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if cfg.CipherSuites == nil {
		cfg.CipherSuites = slices.Clone(tls12CipherSuites)
	}
	protos := []string{"http/1.1"}
	if served != "" {
		protos = []string{served, "http/1.1"}
	}
	for _, p := range cfg.NextProtos {
		if p != mux && !slices.Contains(protos, p) {
			protos = append(protos, p)
		}
	}
	cfg.NextProtos = protos
}

// tls12CipherSuites are the TLS 1.2 cipher suites dwell offers when the configuration does not
// name its own: Mozilla's intermediate profile, less its finite-field DHE suites, which
// crypto/tls does not implement. crypto/tls orders them itself (AES-GCM first where the
// hardware has AES instructions, on both sides), so the order here does not matter.
var tls12CipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLS returns the TLS state of the request's connection — version, cipher suite, the server
// name the client asked for (SNI), the protocol negotiated (ALPN), the client's certificates
// under mutual TLS, whether the session was resumed — or nil over plaintext. Each call
// returns a new copy.
func (cx *Ctx) TLS() *tls.ConnectionState {
	cx.check("TLS")
	if cx.Exchange == nil {
		return nil
	}
	return cx.Exchange.TLSState()
}

// Scheme returns the scheme the request came by: "https" over TLS, else "http". (A request
// through a proxy that ended TLS came by "http"; the proxy's own fields say how the client
// reached it.)
func (cx *Ctx) Scheme() string {
	cx.check("Scheme")
	if cx.Exchange != nil && cx.via.secure() {
		return "https"
	}
	return "http"
}

// TLS returns the TLS state of the connection, as Ctx.TLS does, or nil over plaintext.
// Call it on the connection's loop.
func (hc *Conn) TLS() *tls.ConnectionState {
	if !hc.alive("TLS") {
		return nil
	}
	return hc.Exchange.TLSState()
}

// newTLS makes the loop's TLS transport.
func (l *Loop) newTLS(config *tls.Config) *engine.TLS {
	return engine.NewTLS(engine.TLSOptions{
		Config: config, Log: l.Log, Loop: l.ID, Clock: &l.Clk, Counts: &l.Counts, Poll: l.Poll, Pool: &l.Pool.Pool,
		Plaintext: func(first []byte) []byte {
			if !looksLikeHTTP(first) {
				return nil
			}
			l.Refused(400)
			return plainHTTPAnswer // as net/http answers
		},
	})
}

// looksLikeHTTP reports whether a first record header is the start of a plaintext request.
func looksLikeHTTP(h []byte) bool {
	for _, m := range [...]string{"GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH", "CONNE", "TRACE"} {
		if string(h) == m {
			return true
		}
	}
	return false
}

var plainHTTPAnswer = []byte("HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
