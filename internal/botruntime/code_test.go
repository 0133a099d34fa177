package botruntime

import (
	"encoding/json"
	"testing"
)

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
