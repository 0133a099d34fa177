package botruntime

import (
	"testing"
	"time"
)

// Processes that read a schedule at different times agree on its due
// times: each firing is queued once, under an id made of its due time.
func TestNextFiringAgreesAcrossProcesses(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	for _, tc := range []struct {
		spec string
		want time.Time
	}{
		{"@every 3s", base.Add(3 * time.Second)},
		{"@every 1m", base.Add(time.Minute)},
		{"*/5 * * * *", base.Add(time.Minute)},
	} {
		sched, err := cronParser.Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, read := range []time.Duration{0, 300 * time.Millisecond, 1700 * time.Millisecond, 2999 * time.Millisecond} {
			if got := nextFiring(sched, base.Add(read)); !got.Equal(tc.want) {
				t.Errorf("%s read at +%s: next %s, want %s", tc.spec, read, got.Format(time.TimeOnly), tc.want.Format(time.TimeOnly))
			}
		}
	}
}
