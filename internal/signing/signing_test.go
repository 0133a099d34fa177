package signing

import "testing"

func TestMACBindsEachField(t *testing.T) {
	secret := []byte("k")
	base := MAC(secret, "a", "bc")
	for name, fields := range map[string][]string{
		"value moved to another field": {"ab", "c"},
		"fields joined":                {"abc"},
		"field added":                  {"a", "bc", ""},
		"order changed":                {"bc", "a"},
	} {
		if MAC(secret, fields...) == base {
			t.Errorf("%s: same MAC", name)
		}
	}
	if MAC([]byte("other"), "a", "bc") == base {
		t.Error("another secret gives the same MAC")
	}
	if !Valid(secret, base, "a", "bc") || Valid(secret, base, "a", "bd") || Valid(secret, "", "a", "bc") {
		t.Error("Valid disagrees with MAC")
	}
}
