package runtimeapi

import (
	"context"
	"path"
	"strings"
)

// Calls of an installed integration's code (with its key; see
// docs/integrations.md). An integration names its tags and event types bare
// ("id", "messageReceived"); the bot that installed it as alias sees them as
// "<alias>:id" and "<alias>:messageReceived", and the conversations the
// integration creates are of that integration. The Runtime API stores what
// the bot sees, prefixes what the integration sends and strips the prefix
// from what it reads (Unprefixed).

type integrationKey struct{}

// AsIntegration marks ctx as a call of the integration the bot installed
// as alias.
func AsIntegration(ctx context.Context, alias string) context.Context {
	return context.WithValue(ctx, integrationKey{}, alias)
}

// integrationOf is the alias of the integration making the call, "" for
// the bot itself.
func integrationOf(ctx context.Context) string {
	alias, _ := ctx.Value(integrationKey{}).(string)
	return alias
}

// prefixed is tags with every key that lacks it prefixed with "<alias>:".
func prefixed(alias string, tags map[string]string) map[string]string {
	if alias == "" || tags == nil {
		return tags
	}
	out := make(map[string]string, len(tags))
	for k, v := range tags {
		out[prefix(alias, k)] = v
	}
	return out
}

func prefixedKeys(alias string, keys []string) []string {
	if alias == "" || keys == nil {
		return keys
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = prefix(alias, k)
	}
	return out
}

// prefix is name as the bot sees it: "<alias>:<name>". A name the
// integration qualified itself with its own name ("webhook:event", as
// integrations of @botpress/sdk 0.x send event types) is qualified with the
// alias instead: installed as "acme/webhook", it is "acme/webhook:event".
func prefix(alias, name string) string {
	if q, bare, ok := strings.Cut(name, ":"); ok && (q == alias || q == path.Base(alias)) {
		return alias + ":" + bare
	}
	return alias + ":" + name
}

// Unprefixed is a rendered user, conversation or message as the integration
// alias reads it: its own tags without their prefix, the others as they
// are. A "" alias changes nothing.
func Unprefixed(alias string, rendered map[string]any) map[string]any {
	tags, ok := rendered["tags"].(map[string]string)
	if alias == "" || !ok {
		return rendered
	}
	out := make(map[string]string, len(tags))
	for k, v := range tags {
		if bare, found := strings.CutPrefix(k, alias+":"); found {
			k = bare
		}
		out[k] = v
	}
	rendered["tags"] = out
	return rendered
}
