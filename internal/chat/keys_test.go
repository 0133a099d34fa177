package chat

import (
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/botplatform/botplatform/internal/platform"
)

// FuzzUserKey: any x-user-key is refused or names a non-empty id, within
// a generous time; the id it names passes or fails checkUserFID with a
// 400; a key signed for an id reads back as that id with its secret and
// is refused with another. Seeds are in testdata/fuzz/FuzzUserKey/.
func FuzzUserKey(f *testing.F) {
	secret, other := []byte("bot chat encryption key"), []byte("another bot's key")
	f.Fuzz(func(t *testing.T, key, id string) {
		start := time.Now()
		got, err := VerifyUserKey(secret, key)
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("VerifyUserKey took %v", d)
		}
		if err == nil && got == "" {
			t.Fatalf("%q accepted with no id", key)
		}
		if err == nil {
			if err := checkUserFID(got); err != nil {
				var pe *platform.Error
				if !errors.As(err, &pe) || pe.Type != platform.TypeInvalidPayload {
					t.Fatalf("checkUserFID(%q): %v, want a 400 InvalidPayload", got, err)
				}
			}
		}
		if id == "" || !utf8.ValidString(id) {
			return // JSON cannot carry invalid UTF-8
		}
		signed, err := SignUserKey(secret, id, time.Time{})
		if err != nil {
			t.Fatalf("signing %q: %v", id, err)
		}
		if back, err := VerifyUserKey(secret, signed); err != nil || back != id {
			t.Fatalf("key for %q reads back as %q, %v", id, back, err)
		}
		if _, err := VerifyUserKey(other, signed); err == nil {
			t.Fatalf("key for %q accepted with another secret", id)
		}
	})
}
