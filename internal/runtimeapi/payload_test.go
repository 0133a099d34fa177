package runtimeapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

// sdkMessages has one message of each type @botpress/sdk's default
// messages define (packages/sdk/src/message.ts; the chat integration's
// channel adds markdown and payload.metadata), as a bot writes it, and the
// Chat API payload it is stored and listed as.
var sdkMessages = []struct {
	typ, sdk, chat string
}{
	{"text", `{"text":"hi"}`, `{"type":"text","text":"hi"}`},
	{"markdown", `{"markdown":"**hi**"}`, `{"type":"markdown","markdown":"**hi**"}`},
	{"image", `{"imageUrl":"https://x.test/a.png","title":"A"}`, `{"type":"image","imageUrl":"https://x.test/a.png","title":"A"}`},
	{"audio", `{"audioUrl":"https://x.test/a.mp3"}`, `{"type":"audio","audioUrl":"https://x.test/a.mp3"}`},
	{"video", `{"videoUrl":"https://x.test/a.mp4","title":"V"}`, `{"type":"video","videoUrl":"https://x.test/a.mp4","title":"V"}`},
	{"file", `{"fileUrl":"https://x.test/a.pdf","title":"F"}`, `{"type":"file","fileUrl":"https://x.test/a.pdf","title":"F"}`},
	{"location", `{"latitude":45.5,"longitude":-73.6,"address":"","title":"Here"}`, `{"type":"location","latitude":45.5,"longitude":-73.6,"address":"","title":"Here"}`},
	{"card", `{"title":"T","subtitle":"S","imageUrl":"https://x.test/c.png","actions":[{"action":"postback","label":"L","value":"v"}]}`,
		`{"type":"card","title":"T","subtitle":"S","imageUrl":"https://x.test/c.png","actions":[{"action":"postback","label":"L","value":"v"}]}`},
	{"carousel", `{"items":[{"title":"A","actions":[]},{"title":"B","actions":[{"action":"url","label":"Go","value":"https://x.test"}]}]}`,
		`{"type":"carousel","items":[{"type":"card","title":"A","actions":[]},{"type":"card","title":"B","actions":[{"action":"url","label":"Go","value":"https://x.test"}]}]}`},
	{"dropdown", `{"text":"Pick","options":[{"label":"One","value":"1"}]}`, `{"type":"dropdown","text":"Pick","options":[{"label":"One","value":"1"}]}`},
	{"choice", `{"text":"Pick","options":[{"label":"One","value":"1"},{"label":"Two","value":"2"}]}`,
		`{"type":"choice","text":"Pick","options":[{"label":"One","value":"1"},{"label":"Two","value":"2"}]}`},
	{"bloc", `{"items":[{"type":"text","payload":{"text":"hi"}},{"type":"markdown","payload":{"markdown":"*b*"}},{"type":"image","payload":{"imageUrl":"https://x.test/a.png"}},` +
		`{"type":"audio","payload":{"audioUrl":"https://x.test/a.mp3"}},{"type":"video","payload":{"videoUrl":"https://x.test/a.mp4"}},` +
		`{"type":"file","payload":{"fileUrl":"https://x.test/a.pdf","title":"F"}},{"type":"location","payload":{"latitude":1,"longitude":2}}]}`,
		`{"type":"bloc","items":[{"type":"text","text":"hi"},{"type":"markdown","markdown":"*b*"},{"type":"image","imageUrl":"https://x.test/a.png"},` +
			`{"type":"audio","audioUrl":"https://x.test/a.mp3"},{"type":"video","videoUrl":"https://x.test/a.mp4"},` +
			`{"type":"file","fileUrl":"https://x.test/a.pdf","title":"F"},{"type":"location","latitude":1,"longitude":2}]}`},
}

func jsonEqual(t *testing.T, what string, got any, want string) {
	t.Helper()
	var g, w any
	b, _ := json.Marshal(got)
	if raw, ok := got.(json.RawMessage); ok {
		b = raw
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %s is not JSON: %v", what, b, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want %s is not JSON: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, b, want)
	}
}

func TestSDKMessageToChat(t *testing.T) {
	for _, m := range sdkMessages {
		t.Run(m.typ, func(t *testing.T) {
			payload, metadata, err := chatMessage("", m.typ, json.RawMessage(m.sdk))
			if err != nil {
				t.Fatalf("chatMessage: %v", err)
			}
			jsonEqual(t, "chat payload", payload, m.chat)
			if metadata != nil {
				t.Errorf("metadata: %s, want none", metadata)
			}
		})
	}
}

func TestChatMessageToSDK(t *testing.T) {
	for _, m := range sdkMessages {
		t.Run(m.typ, func(t *testing.T) {
			typ, payload := fromChat(json.RawMessage(m.chat), nil)
			if typ != m.typ {
				t.Errorf("type %q, want %q", typ, m.typ)
			}
			jsonEqual(t, "SDK payload", payload, m.sdk)
		})
	}
}

// A bot that writes the chat's shape (cards with their type, flat bloc
// items) keeps working: the payload is stored as it is.
func TestChatShapeFromBotIsKept(t *testing.T) {
	for _, m := range sdkMessages {
		t.Run(m.typ, func(t *testing.T) {
			var p map[string]json.RawMessage
			_ = json.Unmarshal([]byte(m.chat), &p)
			delete(p, "type")
			in, _ := json.Marshal(p)
			payload, _, err := chatMessage("", m.typ, in)
			if err != nil {
				t.Fatalf("chatMessage: %v", err)
			}
			jsonEqual(t, "chat payload", payload, m.chat)
		})
	}
}

// The SDK's payload.metadata is the chat message's metadata, both ways.
func TestSDKMetadataIsChatMetadata(t *testing.T) {
	payload, metadata, err := chatMessage("", "bloc", json.RawMessage(`{"items":[{"type":"text","payload":{"text":"a"}}],"metadata":{"k":"v"}}`))
	if err != nil {
		t.Fatalf("chatMessage: %v", err)
	}
	jsonEqual(t, "chat payload", payload, `{"type":"bloc","items":[{"type":"text","text":"a"}]}`)
	jsonEqual(t, "chat metadata", metadata, `{"k":"v"}`)
	typ, back := fromChat(payload, metadata)
	if typ != "bloc" {
		t.Errorf("type %q, want bloc", typ)
	}
	jsonEqual(t, "SDK payload", back, `{"items":[{"type":"text","payload":{"text":"a"}}],"metadata":{"k":"v"}}`)

	if _, metadata, err = chatMessage("", "text", json.RawMessage(`{"text":"a","metadata":null}`)); err != nil || metadata != nil {
		t.Errorf("null metadata: %s, %v; want none", metadata, err)
	}
}

// Bad payloads are refused naming the field as the bot wrote it.
func TestBadSDKMessages(t *testing.T) {
	for _, c := range []struct {
		name, field, typ, payload, want string
	}{
		{"no type", "", "", `{"text":"a"}`, "type: is required"},
		{"unknown type", "", "html", `{"html":"a"}`, "type: value must be one of"},
		{"not an object", "", "text", `[1]`, "payload: must be an object"},
		{"empty text", "", "text", `{"text":""}`, "payload.text: minLength"},
		{"card without title", "", "carousel", `{"items":[{"actions":[]}]}`, "payload.items.0.title: is required"},
		{"card of another type", "", "carousel", `{"items":[{"type":"text","title":"a","actions":[]}]}`, "payload.items.0.type: value must be"},
		{"bad action", "", "card", `{"title":"a","actions":[{"action":"call","label":"l","value":"v"}]}`, "payload.actions.0.action: value must be one of"},
		{"option without value", "", "choice", `{"text":"a","options":[{"label":"l"}]}`, "payload.options.0.value: is required"},
		{"bloc item without its field", "", "bloc", `{"items":[{"type":"text","payload":{"text":"a"}},{"type":"image","payload":{}}]}`, "payload.items.1.payload.imageUrl: is required"},
		{"bloc item of no type", "", "bloc", `{"items":[{"payload":{"text":"a"}}]}`, "payload.items.0.type: is required"},
		{"bloc item of an unknown type", "", "bloc", `{"items":[{"type":"card","payload":{"title":"a"}}]}`, "payload.items.0.type: value must be one of"},
		{"flat bloc item without its field", "", "bloc", `{"items":[{"type":"video"}]}`, "payload.items.0.videoUrl: is required"},
		{"metadata not an object", "", "text", `{"text":"a","metadata":"x"}`, "payload.metadata: "},
		{"an import's message", "messages[2].", "bloc", `{"items":[{"type":"file","payload":{"title":"f"}}]}`, "messages[2].payload.items.0.payload.fileUrl: is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := chatMessage(c.field, c.typ, json.RawMessage(c.payload))
			e, ok := err.(*platform.Error)
			if !ok || e.Type != platform.TypeInvalidPayload {
				t.Fatalf("error %v, want InvalidPayload", err)
			}
			if len(e.Message) < len(c.want) || e.Message[:len(c.want)] != c.want {
				t.Errorf("message %q, want it to start with %q", e.Message, c.want)
			}
		})
	}
}
