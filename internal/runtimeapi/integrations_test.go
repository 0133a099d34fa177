package runtimeapi

import (
	"reflect"
	"testing"
)

// What an integration sends is stored as the bot sees it, and what it
// reads is shown as it sent it.
func TestIntegrationNames(t *testing.T) {
	for _, c := range []struct{ alias, name, want string }{
		{"telegram", "id", "telegram:id"},
		{"telegram", "telegram:id", "telegram:id"},              // already the bot's
		{"acme/webhook", "webhook:event", "acme/webhook:event"}, // qualified with its own name (SDK 0.x)
		{"acme/webhook", "acme/webhook:event", "acme/webhook:event"},
		{"telegram", "other:id", "telegram:other:id"}, // another's name is part of its own
	} {
		if got := prefix(c.alias, c.name); got != c.want {
			t.Errorf("prefix(%q, %q) = %q, want %q", c.alias, c.name, got, c.want)
		}
	}
	if got := prefixed("tg", map[string]string{"id": "1", "tg:chat": "2"}); !reflect.DeepEqual(got, map[string]string{"tg:id": "1", "tg:chat": "2"}) {
		t.Errorf("prefixed = %v", got)
	}
	if got := prefixed("", map[string]string{"id": "1"}); !reflect.DeepEqual(got, map[string]string{"id": "1"}) {
		t.Errorf("prefixed for the bot itself = %v", got)
	}
	shown := Unprefixed("tg", map[string]any{"tags": map[string]string{"tg:id": "1", "team": "a"}})
	if !reflect.DeepEqual(shown["tags"], map[string]string{"id": "1", "team": "a"}) {
		t.Errorf("Unprefixed = %v", shown)
	}
}
