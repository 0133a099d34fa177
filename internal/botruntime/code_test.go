package botruntime

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

func TestCheckRecurring(t *testing.T) {
	for spec, field := range map[string]string{
		`{"a":{"type":"t","schedule":{"cron":"not cron"}}}`:                "recurringEvents.a.schedule.cron",
		`{"a":{"schedule":{"cron":"* * * * *"}}}`:                          "recurringEvents.a.type",
		`{"a":{"type":"t","schedule":{"cron":"* * * * *"},"payload":[1]}}`: "recurringEvents.a.payload",
		`[1]`: "recurringEvents",
	} {
		err := checkRecurring(json.RawMessage(spec))
		if e, ok := platform.AsError(err); !ok || !strings.HasPrefix(e.Message, field+":") {
			t.Errorf("checkRecurring(%s) = %v, want an error on %s", spec, err, field)
		}
	}
	for _, spec := range []string{`{"a":{"type":"t","schedule":{"cron":"@every 5m"}}}`, `{"a":null}`, `null`, ``} {
		if err := checkRecurring(json.RawMessage(spec)); err != nil {
			t.Errorf("checkRecurring(%s) = %v", spec, err)
		}
	}
}

func TestPreview(t *testing.T) {
	for payload, want := range map[string]string{
		`{"type":"text","text":"hello"}`:                                                                    "hello",
		`{"type":"markdown","markdown":"**hi**"}`:                                                           "**hi**",
		`{"type":"image","imageUrl":"https://x/y.png"}`:                                                     "[image] https://x/y.png",
		`{"type":"file","fileUrl":"https://x/f.pdf","title":"Report"}`:                                      "[file] Report https://x/f.pdf",
		`{"type":"location","latitude":1.5,"longitude":-2,"title":"Home"}`:                                  "[location] Home (1.5, -2)",
		`{"type":"card","title":"T","subtitle":"S","actions":[{"action":"say","label":"Go","value":"go"}]}`: "[card] T — S [Go]",
		`{"type":"choice","text":"Pick","options":[{"label":"A","value":"a"},{"label":"B","value":"b"}]}`:   "Pick\n- A\n- B",
		`{"type":"bloc","items":[{"type":"text","text":"one"},{"type":"image","imageUrl":"u"}]}`:            "one\n[image] u",
		`{"foo":"bar"}`: `{"foo":"bar"}`,
	} {
		if got := Preview(json.RawMessage(payload)); got != want {
			t.Errorf("Preview(%s) = %q, want %q", payload, got, want)
		}
	}
}
