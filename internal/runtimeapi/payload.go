package runtimeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
)

// A bot speaks the messages of @botpress/sdk (its default messages, which
// the hosted chat integration declares as its channel's); chat users speak
// the Chat API's payloads, and messages are stored in the Chat API's shape.
// The hosted chat integration converts between the two, and so does this
// file, both ways:
//
//   - the SDK's type is the chat payload's "type", the SDK payload the rest;
//   - a carousel's cards have no type in the SDK, "type": "card" in the chat;
//   - a bloc's items are {type, payload: {…}} in the SDK, flat {type, …} in
//     the chat;
//   - the SDK payload's "metadata" is the chat message's metadata.
//
// A bot may also write the chat's shape (cards with their type, flat bloc
// items): it is stored as it is.

// chatMessage joins a Runtime type and payload into the chat payload and
// metadata a message is stored with, checked as chat messages are. field
// prefixes the fields an error names (an import's "messages[3].").
func chatMessage(field, typ string, payload json.RawMessage) (json.RawMessage, json.RawMessage, error) {
	if typ == "" {
		return nil, nil, platform.Invalid(field+"type", "is required")
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(payload, &p); err != nil || p == nil {
		return nil, nil, platform.Invalid(field+"payload", "must be an object")
	}
	out, metadata, nested := toChat(typ, p)
	if _, err := chat.CheckMessage(chat.MessageInput{ConversationID: "-", Payload: out, Metadata: metadata}); err != nil {
		var e *platform.Error
		if errors.As(err, &e) {
			return nil, nil, platform.Invalid("", "%s%s", field, botField(e.Message, nested))
		}
		return nil, nil, err
	}
	if string(metadata) == "null" {
		metadata = nil
	}
	return out, metadata, nil
}

// toChat is the chat payload and metadata of an SDK message, and the
// indexes of the bloc items it flattened.
func toChat(typ string, p map[string]json.RawMessage) (json.RawMessage, json.RawMessage, []int) {
	metadata := p["metadata"]
	delete(p, "metadata")
	var nested []int
	switch typ {
	case "carousel":
		mapItems(p, func(_ int, item map[string]json.RawMessage) map[string]json.RawMessage {
			if _, ok := item["type"]; !ok {
				item["type"] = json.RawMessage(`"card"`)
			}
			return item
		})
	case "bloc":
		mapItems(p, func(i int, item map[string]json.RawMessage) map[string]json.RawMessage {
			var inner map[string]json.RawMessage
			if json.Unmarshal(item["payload"], &inner) != nil || inner == nil {
				return item // the chat's flat item
			}
			nested = append(nested, i)
			if t, ok := item["type"]; ok {
				inner["type"] = t
			}
			return inner
		})
	}
	t, _ := json.Marshal(typ)
	p["type"] = t
	out, _ := json.Marshal(p)
	return out, metadata, nested
}

// fromChat is the Runtime type and SDK payload of a stored chat payload and
// its metadata.
func fromChat(payload, metadata json.RawMessage) (string, map[string]json.RawMessage) {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(payload, &p)
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	var typ string
	_ = json.Unmarshal(p["type"], &typ)
	delete(p, "type")
	switch typ {
	case "carousel":
		mapItems(p, func(_ int, item map[string]json.RawMessage) map[string]json.RawMessage {
			delete(item, "type")
			return item
		})
	case "bloc":
		mapItems(p, func(_ int, item map[string]json.RawMessage) map[string]json.RawMessage {
			t, ok := item["type"]
			delete(item, "type")
			inner, _ := json.Marshal(item)
			out := map[string]json.RawMessage{"payload": inner}
			if ok {
				out["type"] = t
			}
			return out
		})
	}
	if _, ok := p["metadata"]; !ok && metadata != nil {
		p["metadata"] = metadata
	}
	return typ, p
}

// mapItems replaces each object of p's "items" array with f's result;
// anything else in the array, or items that are no array, stay as they are
// for the check to refuse.
func mapItems(p map[string]json.RawMessage, f func(int, map[string]json.RawMessage) map[string]json.RawMessage) {
	var items []json.RawMessage
	if json.Unmarshal(p["items"], &items) != nil || items == nil {
		return
	}
	for i, raw := range items {
		var item map[string]json.RawMessage
		if json.Unmarshal(raw, &item) != nil || item == nil {
			continue
		}
		items[i], _ = json.Marshal(f(i, item))
	}
	p["items"], _ = json.Marshal(items)
}

// botField rewrites a chat check's message ("payload.items.0.text: is
// required") to name the field as the bot wrote it: the chat payload's
// type is the message's type, the metadata a field of the payload, and a
// flattened bloc item's fields are under its payload.
func botField(msg string, nested []int) string {
	switch {
	case strings.HasPrefix(msg, "payload.type:"):
		return strings.TrimPrefix(msg, "payload.")
	case strings.HasPrefix(msg, "metadata"):
		return "payload." + msg
	}
	for _, i := range nested {
		item := fmt.Sprintf("payload.items.%d.", i)
		if strings.HasPrefix(msg, item) && !strings.HasPrefix(msg, item+"type:") {
			return item + "payload." + strings.TrimPrefix(msg, item)
		}
	}
	return msg
}
