package httpapi

import (
	"encoding/json"

	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
)

// upsertFileSchema is the body of upsertFile (spec 4.1 and 4.1.1): no
// property beyond those listed at any level, with the configuration's
// enums and bounds.
var upsertFileSchema = func() *jsonbody.Schema {
	str := obj{"type": "string"}
	boolean := obj{"type": "boolean"}
	integer := func(min, max int) obj { return obj{"type": "integer", "minimum": min, "maximum": max} }
	enum := func(v ...string) obj { return obj{"type": "string", "enum": v} }
	pages := obj{"anyOf": []any{
		obj{"const": true},
		obj{"type": "array", "items": obj{"type": "integer", "minimum": 1}},
	}}
	configuration := strict(obj{
		"parsing": strict(obj{
			"mode": enum("agent", "standard"), "minimumParagraphLength": integer(50, 2000), "smartCleanup": boolean,
		}),
		"chunking": strict(obj{
			"maximumChunkLength": integer(100, 5000), "embeddedContextLevels": integer(0, 3), "embedBreadcrumb": boolean,
		}),
		"summarization": strict(obj{
			"enable": boolean, "modelType": enum(platform.ModelTypes...),
			"minimumInputLength": integer(1000, 10000), "outputTokenLimit": integer(1000, 10000), "generateMasterSummary": boolean,
		}),
		"stack":  enum("legacy", "realtime-v1"),
		"vision": strict(obj{"transcribePages": pages, "indexPages": pages}),
	})
	body := strict(obj{
		"key":                                str,
		"size":                               obj{"type": "integer", "minimum": 0},
		"tags":                               obj{"type": "object", "additionalProperties": obj{"type": "string", "maxLength": 1000}},
		"index":                              boolean,
		"indexing":                           strict(obj{"configuration": configuration}, "configuration"),
		"accessPolicies":                     obj{"type": "array", "items": enum("public_content", "integrations")},
		"contentType":                        obj{"type": "string", "minLength": 1},
		"expiresAt":                          str,
		"publicContentImmediatelyAccessible": boolean,
		"metadata":                           obj{"type": "object"},
	}, "key", "size")
	b, _ := json.Marshal(body)
	return schema("upsert-file.json", string(b))
}()

var updateFileSchema = func() *jsonbody.Schema {
	b, _ := json.Marshal(strict(obj{
		"metadata":       obj{"type": "object"},
		"tags":           obj{"type": "object", "additionalProperties": obj{"anyOf": []any{obj{"type": "string", "maxLength": 1000}, obj{"type": "null"}}}},
		"accessPolicies": obj{"type": "array", "items": obj{"type": "string", "enum": []string{"public_content", "integrations"}}},
		"expiresAt":      obj{"type": []string{"string", "null"}},
	}))
	return schema("update-file.json", string(b))
}()

var copyFileSchema = schema("copy-file.json", `{"type":"object","additionalProperties":false,"properties":{"overwrite":{"type":"boolean"}}}`)
