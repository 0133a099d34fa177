package sdkbot

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzBotAnswer feeds AnswerError what a bot at a url may answer: any bytes
// under any status. What it keeps (for the caller and the bot's logs) is
// only an SDK error's message: valid UTF-8, bounded, and nothing else.
func FuzzBotAnswer(f *testing.F) {
	f.Add(400, []byte(`{"id":"err_1","code":400,"type":"Runtime","message":"Action boom not found"}`))
	f.Add(500, []byte(`{"code":500,"type":"Runtime","message":"`+strings.Repeat("é", 800)+`"}`))
	f.Add(500, []byte(`{"code":400,"type":"Runtime","message":"status differs"}`))
	f.Add(400, []byte(`{"Code":400,"tYpe":"Runtime","messAge":"keys in another case"}`))
	f.Add(502, []byte(`<html>INTERNAL-SECRET</html>`))
	f.Add(500, []byte("{\"code\":500,\"type\":\"Runtime\",\"message\":\"\xff\xfe\"}"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		msg := AnswerError(status, body)
		if msg == "" {
			return
		}
		if !utf8.ValidString(msg) || len(msg) > maxBotError+len("…") {
			t.Fatalf("kept %d bytes, valid UTF-8 %v: %q", len(msg), utf8.ValidString(msg), msg)
		}
		var e map[string]any
		if json.Unmarshal(body, &e) != nil || e["type"] != "Runtime" || e["code"] != float64(status) {
			t.Fatalf("kept %q from an answer that is not an SDK error of its status: %q", msg, body)
		}
	})
}
