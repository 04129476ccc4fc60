package middleware

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// The checks of BearerAuth and BasicAuth compare SHA-256 digests in constant time, so that
// neither the position of the first differing byte nor the length of the secret shows in the
// time a refusal takes.

// secret is a credential kept as its digest.
type secret [sha256.Size]byte

func digestOf(s string) secret { return sha256.Sum256([]byte(s)) }

func (s *secret) equal(d *secret) bool { return subtle.ConstantTimeCompare(s[:], d[:]) == 1 }

// cutScheme splits an Authorization value into its scheme, compared without regard to case,
// and its credentials.
func cutScheme(v, scheme string) (string, bool) {
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) || v[len(scheme)] != ' ' {
		return "", false
	}
	return strings.TrimLeft(v[len(scheme):], " "), true
}

// challenge builds a WWW-Authenticate value: scheme, then the realm as a quoted-string.
func challenge(scheme, realm string) string {
	if realm == "" {
		return scheme
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(realm)
	return scheme + ` realm="` + r + `"`
}

// refuse answers 401 with its challenge.
func refuse(c *core.Ctx, answer ErrorFunc, challenge, msg string) {
	c.SetHeader("WWW-Authenticate", challenge)
	answer(c, 401, msg)
}
