package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"time"
)

// A cookie's value is, in base64url without padding (and decoded strictly, so that no other
// spelling of the same bytes is accepted):
//
//	version (1 byte) | nonce (12) | AES-256-GCM ciphertext of [expiry | payload] | tag (16)
//
// where expiry is the Unix time in seconds, 8 bytes big-endian, and payload the session's
// JSON. GCM authenticates the version and the cookie's name as additional data, so that a
// value opens only under the name it was sealed for.

const (
	formatVersion = 1
	expirySize    = 8

	// maxCookie is the most a browser keeps of a cookie, name, value and attributes together
	// (RFC 6265 §6.1's minimum, which browsers hold to as their maximum).
	maxCookie = 4096
)

// keyLabel separates the keys used here from any other use of the same secret: the AES key is
// HMAC-SHA256(key, keyLabel), so that a key also given to another component (or another
// version of this format) never seals the same way twice.
const keyLabel = "dwell/session AES-256-GCM cookie v1"

var encoding = base64.RawURLEncoding.Strict()

// A codec seals and opens the values of one cookie name.
type codec struct {
	name  string
	ad    []byte        // the additional data: version and name
	aeads []cipher.AEAD // the first seals; all open
}

func newCodec(keys [][]byte, name string) *codec {
	cd := &codec{name: name, ad: append([]byte{formatVersion}, name...)}
	for _, k := range keys {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(keyLabel))
		block, err := aes.NewCipher(m.Sum(nil))
		if err != nil {
			panic("session: " + err.Error()) // a 32-byte key: cannot happen
		}
		aead, err := cipher.NewGCMWithRandomNonce(block)
		if err != nil {
			panic("session: " + err.Error()) // an AES block: cannot happen
		}
		cd.aeads = append(cd.aeads, aead)
	}
	return cd
}

// seal returns the cookie value that holds payload until expires.
func (cd *codec) seal(payload []byte, expires time.Time) string {
	plain := make([]byte, expirySize, expirySize+len(payload))
	binary.BigEndian.PutUint64(plain, uint64(expires.Unix()))
	plain = append(plain, payload...)
	out := cd.aeads[0].Seal([]byte{formatVersion}, nil, plain, cd.ad)
	return encoding.EncodeToString(out)
}

// open returns the payload a cookie value holds, or why it is refused: a cookieError of kind
// ErrInvalid or ErrExpired. The expiry is read only once the value is authenticated, so that
// it cannot be changed.
func (cd *codec) open(value string, now time.Time) ([]byte, error) {
	if len(value) > maxCookie {
		return nil, cd.invalid("it is longer than a browser keeps", nil)
	}
	raw, err := encoding.DecodeString(value)
	if err != nil {
		return nil, cd.invalid("it is not base64url", err)
	}
	if len(raw) < 1+cd.aeads[0].Overhead()+expirySize {
		return nil, cd.invalid("it is too short to be sealed", nil)
	}
	if raw[0] != formatVersion {
		return nil, cd.invalid("it is of an unknown format", nil)
	}
	for _, aead := range cd.aeads {
		plain, err := aead.Open(nil, nil, raw[1:], cd.ad)
		if err != nil {
			continue
		}
		expires := time.Unix(int64(binary.BigEndian.Uint64(plain)), 0)
		if !now.Before(expires) {
			return nil, &cookieError{kind: ErrExpired, name: cd.name,
				detail: "it expired at " + expires.UTC().Format(time.RFC3339)}
		}
		return plain[expirySize:], nil
	}
	return nil, cd.invalid("none of the keys opens it: it was changed, made up, sealed under a key "+
		"no longer in Options.Keys, or for another cookie name", nil)
}

func (cd *codec) invalid(detail string, cause error) error {
	return &cookieError{kind: ErrInvalid, name: cd.name, detail: detail, cause: cause}
}
