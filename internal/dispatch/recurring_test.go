package dispatch

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
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

func TestCheckRecurring(t *testing.T) {
	for spec, field := range map[string]string{
		`{"a":{"type":"t","schedule":{"cron":"not cron"}}}`:                "recurringEvents.a.schedule.cron",
		`{"a":{"schedule":{"cron":"* * * * *"}}}`:                          "recurringEvents.a.type",
		`{"a":{"type":"t","schedule":{"cron":"* * * * *"},"payload":[1]}}`: "recurringEvents.a.payload",
		`[1]`: "recurringEvents",
	} {
		err := CheckRecurring(json.RawMessage(spec))
		if e, ok := platform.AsError(err); !ok || !strings.HasPrefix(e.Message, field+":") {
			t.Errorf("CheckRecurring(%s) = %v, want an error on %s", spec, err, field)
		}
	}
	for _, spec := range []string{`{"a":{"type":"t","schedule":{"cron":"@every 5m"}}}`, `{"a":null}`, `null`, ``} {
		if err := CheckRecurring(json.RawMessage(spec)); err != nil {
			t.Errorf("CheckRecurring(%s) = %v", spec, err)
		}
	}
}
