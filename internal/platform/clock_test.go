package platform

import (
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 21, 23, 44, 16, 362_999_999, time.UTC), "2026-11-21T23:44:16.362Z"},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "0001-01-01T00:00:00.000Z"},
		{time.Date(2024, 2, 29, 9, 5, 7, 1_000_000, time.FixedZone("x", 3600)), "2024-02-29T08:05:07.001Z"},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "10000-01-01T00:00:00.000Z"},
	} {
		if got := FormatTime(tc.in); got != tc.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if tc.in.Year() <= 9999 {
			if ref := tc.in.UTC().Format("2006-01-02T15:04:05.000Z07:00"); ref != tc.want {
				t.Errorf("time.Format gives %q, want %q", ref, tc.want)
			}
		}
	}
}

func TestNewIDSortable(t *testing.T) {
	a, b := NewID(PrefixBot), NewID(PrefixBot)
	if !(a < b) || len(a) != len(PrefixBot)+26 {
		t.Fatalf("ids %q, %q: want increasing, %d characters", a, b, len(PrefixBot)+26)
	}
}
