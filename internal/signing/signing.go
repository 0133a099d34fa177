// Package signing computes and checks the MACs that signed URLs carry.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// MAC is the HMAC-SHA256 of fields under secret, in hex. Each field is
// prefixed with its length, so that no value can move to another field
// (or be split or joined) and keep the MAC.
func MAC(secret []byte, fields ...string) string {
	m := hmac.New(sha256.New, secret)
	var n []byte
	for _, f := range fields {
		n = binary.AppendUvarint(n[:0], uint64(len(f)))
		m.Write(n)
		m.Write([]byte(f))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Valid reports whether mac is the MAC of fields under secret, in
// constant time.
func Valid(secret []byte, mac string, fields ...string) bool {
	return hmac.Equal([]byte(MAC(secret, fields...)), []byte(mac))
}
