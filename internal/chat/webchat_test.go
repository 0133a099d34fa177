package chat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/botplatform/botplatform/internal/platform"
)

// The web chat's userData and attributes: objects, tokens signed with the
// bot's secret (and no other key or algorithm), null to remove; a refusal
// names the field and leaves the user as it was.
func TestWebchatUserData(t *testing.T) {
	b := &Webhook{ID: "bot_1", Key: []byte("the bot's secret")}
	sign := func(key []byte, m jwt.SigningMethod, claims jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(m, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	u := platform.ChatUser{Profile: `{"plan":"free"}`, Attributes: map[string]string{"locale": "fr"}}
	for _, tc := range []struct {
		name      string
		in        UserInput
		wantErr   string // the field a refusal names
		wantData  string
		wantAttrs map[string]string
	}{
		{"object", UserInput{UserData: json.RawMessage(`{"plan":"pro","seats":3}`)}, "", `{"plan":"pro","seats":3}`, map[string]string{"locale": "fr"}},
		{"signed", UserInput{UserData: str(sign(b.Key, jwt.SigningMethodHS256, jwt.MapClaims{"plan": "team", "exp": time.Now().Add(time.Hour).Unix()}))}, "", `{"plan":"team"}`, map[string]string{"locale": "fr"}},
		{"null removes", UserInput{UserData: json.RawMessage(`null`)}, "", ``, map[string]string{"locale": "fr"}},
		{"another key", UserInput{UserData: str(sign([]byte("another"), jwt.SigningMethodHS256, jwt.MapClaims{"plan": "x"}))}, "userData", `{"plan":"free"}`, nil},
		{"another algorithm", UserInput{UserData: str(sign(b.Key, jwt.SigningMethodHS512, jwt.MapClaims{"plan": "x"}))}, "userData", `{"plan":"free"}`, nil},
		{"unsigned", UserInput{UserData: str(`eyJhbGciOiJub25lIn0.eyJwbGFuIjoieCJ9.`)}, "userData", `{"plan":"free"}`, nil},
		{"expired", UserInput{UserData: str(sign(b.Key, jwt.SigningMethodHS256, jwt.MapClaims{"plan": "x", "exp": time.Now().Add(-time.Hour).Unix()}))}, "userData", `{"plan":"free"}`, nil},
		{"a list", UserInput{UserData: json.RawMessage(`[1]`)}, "userData", `{"plan":"free"}`, nil},
		{"too big", UserInput{UserData: json.RawMessage(`{"a":"` + strings.Repeat("x", MaxUserData) + `"}`)}, "userData", `{"plan":"free"}`, nil},
		{"attributes", UserInput{Attributes: json.RawMessage(`{"locale":null,"team":"core"}`)}, "", `{"plan":"free"}`, map[string]string{"team": "core"}},
		{"attribute not a string", UserInput{Attributes: json.RawMessage(`{"n":3}`)}, "attributes.n", `{"plan":"free"}`, nil},
		{"signed attributes", UserInput{Attributes: str(sign(b.Key, jwt.SigningMethodHS256, jwt.MapClaims{"team": "ops"}))}, "", `{"plan":"free"}`, map[string]string{"locale": "fr", "team": "ops"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := u
			got.Attributes = map[string]string{"locale": "fr"}
			err := tc.in.apply(b, &got)
			if tc.wantErr != "" {
				e, ok := platform.AsError(err)
				if !ok || e.Type != platform.TypeInvalidPayload || !strings.HasPrefix(e.Message, tc.wantErr+":") {
					t.Fatalf("apply = %v, want a 400 naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Profile != tc.wantData {
				t.Errorf("data %s, want %s", got.Profile, tc.wantData)
			}
			if len(got.Attributes) != len(tc.wantAttrs) {
				t.Errorf("attributes %v, want %v", got.Attributes, tc.wantAttrs)
			}
			for k, v := range tc.wantAttrs {
				if got.Attributes[k] != v {
					t.Errorf("attributes %v, want %v", got.Attributes, tc.wantAttrs)
				}
			}
		})
	}
}

// The web chat's frames: a bot's event is custom, a user's is not sent,
// deletions are not sent, others pass as they are.
func TestWebchatFrames(t *testing.T) {
	s := &Service{}
	each := s.WebchatFrames(t.Context(), "bot_1")
	for _, tc := range []struct{ in, want string }{
		{`{"type":"event_created","data":{"payload":{"kind":"confetti"},"isBot":true}}`, `{"type":"custom","data":{"event":{"kind":"confetti"}}}`},
		{`{"type":"event_created","data":{"payload":{"kind":"x"},"isBot":false}}`, ``},
		{`{"type":"message_deleted","data":{"id":"msg_1"}}`, ``},
		{`{"type":"message_created","data":{"id":"msg_1"}}`, `{"type":"message_created","data":{"id":"msg_1"}}`},
		{`{"type":"typing_started","data":{"timeout":4000}}`, `{"type":"typing_started","data":{"timeout":4000}}`},
	} {
		if got := string(each([]byte(tc.in))); got != tc.want {
			t.Errorf("%s -> %s, want %s", tc.in, got, tc.want)
		}
	}
}
