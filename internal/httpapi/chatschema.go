package httpapi

import (
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// messageSchema is the body of createMessage: the payload union of
// compat-notes §1.6, strings marked non-empty there with minLength 1.
// Payloads may carry extra properties, as the client's types allow.
var messageSchema = func() *jsonschema.Schema {
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
	var blocItems []any
	for _, t := range []string{"text", "markdown", "image", "audio", "video", "file", "location"} {
		blocItems = append(blocItems, withType(types[t], t))
	}
	types["bloc"] = loose(obj{"items": obj{"type": "array", "items": obj{"anyOf": blocItems}}}, "items")

	names := make([]string, 0, len(types))
	var rules []any
	for name, s := range types {
		names = append(names, name)
		rules = append(rules, obj{"if": obj{"properties": obj{"type": obj{"const": name}}}, "then": s})
	}
	payload := obj{"type": "object", "required": []string{"type"}, "properties": obj{"type": obj{"enum": names}}, "allOf": rules}
	body := strict(obj{"payload": payload, "conversationId": str, "metadata": obj{"type": []string{"object", "null"}}}, "payload", "conversationId")
	b, _ := json.Marshal(body)
	return schema("chat-message.json", string(b))
}()

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
