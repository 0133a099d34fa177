package chat

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/botplatform/botplatform/internal/jsonbody"
)

// MessageInput is a message about to be created: the body of the Chat
// API's createMessage, or a message bot code sends.
type MessageInput struct {
	ConversationID string          `json:"conversationId"`
	Payload        json.RawMessage `json:"payload"`
	Metadata       json.RawMessage `json:"metadata,omitempty"` // nil when absent or null
}

// DecodeMessage checks a createMessage body against MessageSchema and
// decodes it.
func DecodeMessage(body []byte) (MessageInput, error) {
	var m MessageInput
	if err := jsonbody.Decode(body, MessageSchema, &m); err != nil {
		return m, err
	}
	return m.Clean(), nil
}

// Clean returns m, decoded from a body MessageSchema accepts, with a null
// metadata dropped: null is none.
func (m MessageInput) Clean() MessageInput {
	if string(m.Metadata) == "null" {
		m.Metadata = nil
	}
	return m
}

// CheckMessage checks a message bot code sends as createMessage checks a
// user's, so that a bot's messages obey the rules users' messages do. It
// returns m with a null metadata dropped.
func CheckMessage(m MessageInput) (MessageInput, error) {
	if len(m.Payload) == 0 {
		m.Payload = json.RawMessage(`null`) // refused as the wrong type, not as missing
	}
	if string(m.Metadata) == "null" {
		m.Metadata = nil
	}
	body, err := json.Marshal(m)
	if err != nil {
		return m, err
	}
	_, err = DecodeMessage(body)
	return m, err
}

type obj = map[string]any

// MessageSchema is the body of createMessage: the payload union of
// compat-notes §1.6, strings marked non-empty there with minLength 1.
// Payloads may carry extra properties, as the client's types allow.
var MessageSchema = compileMessage("chat-message.json", []string{"payload", "conversationId"},
	obj{"payload": payloadSchema, "conversationId": obj{"type": "string"}, "metadata": obj{"type": []string{"object", "null"}}})

// UpdateMessageSchema is the body of the web chat's updateMessage: a new
// payload, metadata, or both.
var UpdateMessageSchema = compileMessage("chat-update-message.json", nil,
	obj{"payload": payloadSchema, "metadata": obj{"type": []string{"object", "null"}}})

func compileMessage(name string, required []string, props obj) *jsonbody.Schema {
	body := obj{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		body["required"] = required
	}
	b, _ := json.Marshal(body)
	return jsonbody.Compile(name, string(b))
}

// payloadSchema is a message's payload: one of the Chat API's types.
var payloadSchema = func() obj {
	ne := obj{"type": "string", "minLength": 1}
	str := obj{"type": "string"}
	num := obj{"type": "number"}
	loose := func(props obj, required ...string) obj {
		o := obj{"type": "object", "properties": props}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	action := loose(obj{"action": obj{"enum": []string{"postback", "url", "say"}}, "label": ne, "value": ne}, "action", "label", "value")
	card := loose(obj{"title": ne, "subtitle": ne, "imageUrl": ne, "actions": obj{"type": "array", "items": action}}, "title", "actions")
	option := loose(obj{"label": ne, "value": ne}, "label", "value")
	choice := loose(obj{"text": ne, "options": obj{"type": "array", "items": option}}, "text", "options")
	types := map[string]obj{
		"text":     loose(obj{"text": ne}, "text"),
		"markdown": loose(obj{"markdown": ne}, "markdown"),
		"image":    loose(obj{"imageUrl": ne}, "imageUrl"),
		"audio":    loose(obj{"audioUrl": ne}, "audioUrl"),
		"video":    loose(obj{"videoUrl": ne}, "videoUrl"),
		"file":     loose(obj{"fileUrl": ne, "title": ne}, "fileUrl"),
		"location": loose(obj{"latitude": num, "longitude": num, "address": str, "title": str}, "latitude", "longitude"),
		"card":     card,
		"carousel": loose(obj{"items": obj{"type": "array", "items": withType(card, "card")}}, "items"),
		"choice":   choice,
		"dropdown": choice,
	}
	blocItems := map[string]obj{}
	for _, t := range []string{"text", "markdown", "image", "audio", "video", "file", "location"} {
		blocItems[t] = types[t]
	}
	types["bloc"] = loose(obj{"items": obj{"type": "array", "items": union(blocItems)}}, "items")
	return union(types)
}()

// union is an object of one of the given types, named by its "type":
// checked against that type's schema only, so that an error names the
// field at fault of the type given rather than of the first type tried.
func union(types map[string]obj) obj {
	// Sorted, so that the source, which the API document shows, is the same
	// in every process.
	names := slices.Sorted(maps.Keys(types))
	var rules []any
	for _, name := range names {
		rules = append(rules, obj{"if": obj{"properties": obj{"type": obj{"const": name}}}, "then": types[name]})
	}
	return obj{"type": "object", "required": []string{"type"}, "properties": obj{"type": obj{"enum": names}}, "allOf": rules}
}

// withType is s requiring the given type discriminator.
func withType(s obj, t string) obj {
	out := obj{}
	for k, v := range s {
		out[k] = v
	}
	props := obj{"type": obj{"const": t}}
	for k, v := range s["properties"].(obj) {
		props[k] = v
	}
	out["properties"] = props
	req := []string{"type"}
	if r, ok := s["required"].([]string); ok {
		req = append(req, r...)
	}
	out["required"] = req
	return out
}
