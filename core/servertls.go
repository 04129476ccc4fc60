package core

import (
	"crypto/tls"
	"errors"
	"slices"
)

// ListenAndServeTLS is ListenAndServe over TLS, as net/http's: certFile and keyFile hold the
// server's certificate (followed by any intermediates) and its private key, in PEM. They may
// be empty when Options.TLSConfig has Certificates, GetCertificate or GetConfigForClient.
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	s.mu.Lock()
	cfg := s.opts.TLSConfig
	s.mu.Unlock()
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
	s.mu.Lock()
	s.tlsConfig = cfg
	s.mu.Unlock()
	return s.ListenAndServe()
}

// prepareTLS makes the configuration the loops serve TLS with, from Options.TLSConfig or what
// ListenAndServeTLS made of it. s.mu is held.
func (s *Server) prepareTLS() error {
	cfg := s.tlsConfig
	if cfg == nil {
		if s.opts.TLSConfig == nil {
			return nil
		}
		cfg = s.opts.TLSConfig.Clone()
	}
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		return errors.New("dwell: TLSConfig has no certificate (Certificates, GetCertificate or GetConfigForClient)")
	}
	protos := []string{"http/1.1"}
	for _, p := range cfg.NextProtos {
		if p != "h2" && !slices.Contains(protos, p) {
			protos = append(protos, p)
		}
	}
	cfg.NextProtos = protos
	s.tlsConfig = cfg
	return nil
}

// TLS returns the TLS state of the request's connection — version, cipher suite, the server
// name the client asked for (SNI), the protocol negotiated (ALPN), the client's certificates
// under mutual TLS, whether the session was resumed — or nil over plaintext. Each call
// returns a new copy.
func (cx *Ctx) TLS() *tls.ConnectionState {
	cx.check("TLS")
	if cx.conn == nil || cx.l.tlsT == nil {
		return nil
	}
	return cx.l.tlsT.connState(cx.conn)
}

// Scheme returns the scheme the request came by: "https" over TLS, else "http". (A request
// through a proxy that ended TLS came by "http"; the proxy's own fields say how the client
// reached it.)
func (cx *Ctx) Scheme() string {
	cx.check("Scheme")
	if cx.l.tlsT != nil {
		return "https"
	}
	return "http"
}

// TLS returns the TLS state of the connection, as Ctx.TLS does, or nil over plaintext.
// Call it on the connection's loop.
func (hc *Conn) TLS() *tls.ConnectionState {
	if !hc.alive("TLS") || hc.c.l.tlsT == nil {
		return nil
	}
	return hc.c.l.tlsT.connState(hc.c)
}
