package httpapi

import (
	"encoding/json"

	"github.com/botplatform/botplatform/internal/jsonbody"
)

// The createBot and updateBot bodies (compat-notes §2.3). updateBot accepts
// null map entries (removal) and more fields; createBot accepts dev.
var (
	createBotSchema = botSchema(false)
	updateBotSchema = botSchema(true)
)

type obj = map[string]any

func strict(props obj, required ...string) obj {
	o := obj{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func botSchema(update bool) *jsonbody.Schema {
	str := obj{"type": "string"}
	boolean := obj{"type": "boolean"}
	object := obj{"type": "object"}
	nullable := func(s obj) obj {
		if !update {
			return s
		}
		return obj{"anyOf": []any{s, obj{"type": "null"}}}
	}
	mapOf := func(v obj) obj { return obj{"type": "object", "additionalProperties": nullable(v)} }
	tagDefs := strict(obj{"tags": mapOf(strict(obj{"title": str, "description": str}))})
	attributes := mapOf(str)
	props := obj{
		"name":             obj{"type": "string", "minLength": 1},
		"description":      obj{"type": "string", "maxLength": 2000},
		"tags":             mapOf(str),
		"url":              nullable(str),
		"code":             str,
		"secrets":          mapOf(str),
		"type":             obj{"enum": []string{"studio", "adk", "desk"}},
		"maxExecutionTime": obj{"type": "integer"},
		"medias":           obj{"type": "array", "items": strict(obj{"url": str, "name": str}, "url", "name")},
		"states": mapOf(strict(obj{
			"type": obj{"enum": []string{"conversation", "user", "bot"}}, "schema": object, "expiry": obj{"type": "number"},
		}, "type", "schema")),
		"events": mapOf(strict(obj{"title": str, "description": str, "schema": object, "attributes": attributes}, "schema")),
		"recurringEvents": mapOf(strict(obj{
			"schedule": strict(obj{"cron": str}, "cron"), "type": str, "payload": object,
		}, "schedule", "type", "payload")),
		"subscriptions": strict(obj{"events": obj{"anyOf": []any{mapOf(object), obj{"type": "null"}}}}, "events"),
		"actions": mapOf(strict(obj{
			"title": str, "description": str, "billable": boolean, "cacheable": boolean,
			"input": strict(obj{"schema": object}, "schema"), "output": strict(obj{"schema": object}, "schema"), "attributes": attributes,
		}, "input", "output")),
		"configuration": strict(obj{"data": object, "schema": object}),
		"user":          tagDefs,
		"conversation":  tagDefs,
		"message":       tagDefs,
	}
	if update {
		props["authentication"] = obj{"enum": []string{"iam", "hmac-sha256"}}
		props["blocked"] = boolean
		props["alwaysAlive"] = boolean
		props["layers"] = obj{"type": "array", "items": str}
		props["integrations"] = mapOf(strict(obj{
			"enabled": boolean, "integrationId": str, "configurationType": obj{"type": []string{"string", "null"}},
			"configuration": object, "disabledChannels": obj{"type": "array", "items": str},
		}))
		props["plugins"] = mapOf(strict(obj{
			"id": str, "enabled": boolean, "configuration": object,
			"interfaces": obj{"type": "object", "additionalProperties": strict(obj{"integrationId": str, "integrationAlias": str,
				"integrationInterfaceAlias": str}, "integrationId")},
			"integrations": obj{"type": "object", "additionalProperties": strict(obj{"integrationId": str, "integrationAlias": str},
				"integrationId", "integrationAlias")},
		}, "id"))
		// The definition says the hosted service ignores it; older CLIs
		// still send it.
		props["shouldMergePlugins"] = boolean
		// Not in the official client's body: `bp deploy` sends the bot's
		// declared tables (see tables.DeployTables).
		props["tables"] = mapOf(object)
	} else {
		props["dev"] = boolean
	}
	src, err := json.Marshal(strict(props))
	if err != nil {
		panic(err)
	}
	name := "create-bot.json"
	if update {
		name = "update-bot.json"
	}
	return schema(name, string(src))
}
