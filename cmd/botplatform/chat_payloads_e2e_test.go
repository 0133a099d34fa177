package main

// Chat API end-to-end: message payloads, metadata and the payload size
// limit.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func testChatMessagePayloads(t *testing.T, e *chatEnv) {
	u := e.user("payloads")
	c := e.conversation(u, "")
	type obj = map[string]any
	type arr = []any
	card := obj{"type": "card", "title": "T", "subtitle": "S", "imageUrl": "https://example.com/i.png", "actions": arr{
		obj{"action": "postback", "label": "L", "value": "V"}, obj{"action": "url", "label": "Go", "value": "https://example.com"}, obj{"action": "say", "label": "Say", "value": "hi"},
	}}
	good := []obj{
		{"type": "text", "text": "hello"},
		{"type": "text", "text": "extra properties are kept", "extra": obj{"n": 1.0}},
		{"type": "markdown", "markdown": "**bold**"},
		{"type": "image", "imageUrl": "https://example.com/i.png"},
		{"type": "audio", "audioUrl": "https://example.com/a.mp3"},
		{"type": "video", "videoUrl": "https://example.com/v.mp4"},
		{"type": "file", "fileUrl": "https://example.com/f.pdf"},
		{"type": "file", "fileUrl": "https://example.com/f.pdf", "title": "F"},
		{"type": "location", "latitude": 45.5, "longitude": -73.6},
		{"type": "location", "latitude": 0.0, "longitude": 0.0, "address": "", "title": ""},
		card,
		{"type": "card", "title": "No actions", "actions": arr{}},
		{"type": "carousel", "items": arr{card, obj{"type": "card", "title": "Second", "actions": arr{}}}},
		{"type": "choice", "text": "Pick", "options": arr{obj{"label": "A", "value": "a"}, obj{"label": "B", "value": "b"}}},
		{"type": "dropdown", "text": "Pick", "options": arr{obj{"label": "A", "value": "a"}}},
		{"type": "bloc", "items": arr{
			obj{"type": "text", "text": "t"}, obj{"type": "markdown", "markdown": "m"}, obj{"type": "image", "imageUrl": "i"},
			obj{"type": "audio", "audioUrl": "a"}, obj{"type": "video", "videoUrl": "v"}, obj{"type": "file", "fileUrl": "f"},
			obj{"type": "location", "latitude": 1.0, "longitude": 2.0},
		}},
	}
	for _, p := range good {
		r := e.call(http.MethodPost, "/messages", u.Key, obj{"conversationId": c, "payload": p})
		if r.Status != 201 {
			t.Errorf("payload %v: status %d, want 201; body %s", p, r.Status, r.Body)
			continue
		}
		m := field(t, r.object(), "message").(map[string]any)
		wantEqual(t, m["payload"], p, "stored payload of type %v", p["type"])
		wantEqual(t, field(t, e.call(http.MethodGet, "/messages/"+m["id"].(string), u.Key, nil).ok(), "message", "payload"), p, "getMessage payload of type %v", p["type"])
	}

	bad := []obj{
		{},
		{"text": "no type"},
		{"type": "sticker", "url": "x"},
		{"type": 5},
		{"type": "text"},
		{"type": "text", "text": ""},
		{"type": "text", "text": 5.0},
		{"type": "markdown"},
		{"type": "markdown", "markdown": ""},
		{"type": "image", "imageUrl": ""},
		{"type": "audio"},
		{"type": "video", "videoUrl": ""},
		{"type": "file", "title": "no url"},
		{"type": "file", "fileUrl": "f", "title": ""},
		{"type": "location", "latitude": 1.0},
		{"type": "location", "latitude": "1", "longitude": 2.0},
		{"type": "card", "actions": arr{}},
		{"type": "card", "title": "", "actions": arr{}},
		{"type": "card", "title": "T"},
		{"type": "card", "title": "T", "actions": arr{obj{"action": "call", "label": "L", "value": "V"}}},
		{"type": "card", "title": "T", "actions": arr{obj{"action": "url", "label": "", "value": "V"}}},
		{"type": "card", "title": "T", "actions": arr{obj{"action": "url", "label": "L"}}},
		{"type": "card", "title": "T", "subtitle": "", "actions": arr{}},
		{"type": "carousel"},
		{"type": "carousel", "items": obj{}},
		{"type": "carousel", "items": arr{obj{"title": "no type", "actions": arr{}}}},
		{"type": "carousel", "items": arr{obj{"type": "text", "text": "not a card"}}},
		{"type": "choice", "text": "Pick"},
		{"type": "choice", "text": "", "options": arr{}},
		{"type": "choice", "text": "Pick", "options": arr{obj{"label": "A", "value": ""}}},
		{"type": "dropdown", "options": arr{}},
		{"type": "bloc"},
		{"type": "bloc", "items": arr{card}},
		{"type": "bloc", "items": arr{obj{"type": "text", "text": ""}}},
		{"type": "bloc", "items": arr{obj{"text": "no type"}}},
	}
	for _, p := range bad {
		r := e.call(http.MethodPost, "/messages", u.Key, obj{"conversationId": c, "payload": p})
		if r.Status != 400 {
			t.Errorf("payload %v: status %d, want 400; body %s", p, r.Status, r.Body)
			continue
		}
		r.fail(400, "InvalidPayload", "payload")
	}
	for _, b := range []struct {
		body    any
		mention string
	}{
		{obj{"conversationId": c}, "payload"},
		{obj{"conversationId": c, "payload": "text"}, "payload"},
		{obj{"conversationId": c, "payload": arr{}}, "payload"},
		{obj{"payload": obj{"type": "text", "text": "x"}}, "conversationId"},
		{obj{"conversationId": c, "payload": obj{"type": "text", "text": "x"}, "metadata": "m"}, "metadata"},
		{obj{"conversationId": c, "payload": obj{"type": "text", "text": "x"}, "metadata": arr{}}, "metadata"},
		{obj{"conversationId": c, "payload": obj{"type": "text", "text": "x"}, "userId": "someone"}, "userId"},
	} {
		e.call(http.MethodPost, "/messages", u.Key, b.body).fail(400, "InvalidPayload", b.mention)
	}
	// Nothing invalid was stored.
	ids, _, _ := e.pages(t, "/conversations/"+c+"/messages", u.Key, "messages", 100)
	if len(ids) != len(good) {
		t.Fatalf("%d messages stored, want the %d good ones", len(ids), len(good))
	}
}

func testChatMetadata(t *testing.T, e *chatEnv) {
	u := e.user("meta")
	c := e.conversation(u, "")
	st := e.listenTo(u, c)
	meta := map[string]any{"source": "web", "n": 2.0, "none": nil, "deep": map[string]any{"a": []any{1.0}}}
	payload := map[string]any{"type": "text", "text": "with metadata"}
	m := field(t, e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": payload, "metadata": meta}).status(201), "message").(map[string]any)
	wantKeys(t, m, "message", "id", "createdAt", "payload", "userId", "conversationId", "metadata")
	wantDate(t, m["createdAt"], "message.createdAt")
	wantEqual(t, m["metadata"], meta, "message.metadata")
	wantEqual(t, m["payload"], payload, "message.payload (no metadata inside)")
	got := field(t, e.call(http.MethodGet, "/messages/"+m["id"].(string), u.Key, nil).ok(), "message").(map[string]any)
	wantEqual(t, got, m, "getMessage")
	list := e.call(http.MethodGet, "/conversations/"+c+"/messages", u.Key, nil).ok()["messages"].([]any)
	wantEqual(t, list[0], m, "listMessages item")
	sig := st.expect(t, "message_created")
	if _, ok := sig["payload"].(map[string]any)["metadata"]; ok {
		t.Fatalf("the signal's payload carries metadata: %v", sig)
	}
	wantEqual(t, sig["metadata"], meta, "signal metadata")

	// Without metadata (or with null): no metadata anywhere.
	for _, body := range []map[string]any{
		{"conversationId": c, "payload": payload},
		{"conversationId": c, "payload": payload, "metadata": nil},
	} {
		m := field(t, e.call(http.MethodPost, "/messages", u.Key, body).status(201), "message").(map[string]any)
		if _, ok := m["metadata"]; ok {
			t.Errorf("a message without metadata has %v", m["metadata"])
		}
		if _, ok := m["payload"].(map[string]any)["metadata"]; ok {
			t.Errorf("payload carries metadata: %v", m["payload"])
		}
	}
	// A payload may itself have a property named metadata: it stays in
	// the payload, and is not the message's metadata.
	odd := map[string]any{"type": "text", "text": "x", "metadata": map[string]any{"in": "payload"}}
	m = field(t, e.call(http.MethodPost, "/messages", u.Key, map[string]any{"conversationId": c, "payload": odd}).status(201), "message").(map[string]any)
	wantEqual(t, m["payload"], odd, "payload with its own metadata property")
	if _, ok := m["metadata"]; ok {
		t.Errorf("the payload's metadata property became the message's: %v", m)
	}
}

func testChatPayloadTooLarge(t *testing.T, e *chatEnv) {
	u := e.user("big")
	c := e.conversation(u, "")
	body := func(n int) string {
		return fmt.Sprintf(`{"conversationId":%q,"payload":{"type":"text","text":"%s"}}`, c, strings.Repeat("a", n))
	}
	r := e.call(http.MethodPost, "/messages", u.Key, body(1<<20+10))
	if r.Status != 413 {
		t.Fatalf("a chat body over 1 MB: status %d, want 413", r.Status)
	}
	r.fail(413, "PayloadTooLarge")
	e.call(http.MethodPost, "/events", u.Key, fmt.Sprintf(`{"conversationId":%q,"payload":{"x":"%s"}}`, c, strings.Repeat("b", 1<<20))).fail(413, "PayloadTooLarge")
	e.call(http.MethodPost, "/users", "", fmt.Sprintf(`{"name":"%s"}`, strings.Repeat("c", 2<<20))).fail(413, "PayloadTooLarge")
	// Just under the limit is fine; the server still answers afterwards.
	m := field(t, e.call(http.MethodPost, "/messages", u.Key, body(1<<20-200)).status(201), "message").(map[string]any)
	if n := len(field(t, m, "payload", "text").(string)); n != 1<<20-200 {
		t.Fatalf("stored text of %d bytes, want %d", n, 1<<20-200)
	}
	if ids, _, _ := e.pages(t, "/conversations/"+c+"/messages", u.Key, "messages", 0); len(ids) != 1 {
		t.Fatalf("%d messages stored, want the one under the limit", len(ids))
	}
}
