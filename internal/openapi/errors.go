package openapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// errorSchema is the error body both official clients parse (compat-notes
// §0): they choose the error's class from type alone.
var errorSchema = props(obj{
	"id":        obj{"type": "string", "description": "err_ + the UTC time as YYYYMMDDHHMMSS + x + 8 upper-case hex digits"},
	"code":      obj{"type": "integer", "description": "the HTTP status"},
	"type":      enum(typeNames(platform.ErrorTypes)...),
	"message":   obj{"type": "string", "description": "what went wrong, for people; a field at fault is named first (tags.color: …)"},
	"metadata":  object,
	"requestId": obj{"type": "string", "description": "the response's x-request-id, which the server's logs carry too"},
}, "id", "code", "type", "message")

// errorTypes are the error types of each status, from the server's own
// type → status table.
func errorTypes() map[int][]string {
	out := map[int][]string{}
	for _, t := range platform.ErrorTypes {
		out[t.Status()] = append(out[t.Status()], string(t))
	}
	return out
}

func typeNames(ts []platform.ErrorType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func errorName(status int) string { return fmt.Sprintf("Error%d", status) }

// errorResponses are the error responses by status: the error body, whose
// type is one of that status's.
func errorResponses() obj {
	out := obj{}
	byStatus := errorTypes()
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		types := byStatus[status]
		resp := obj{
			"description": fmt.Sprintf("%s: %s", http.StatusText(status), strings.Join(types, ", ")),
			"content": obj{"application/json": obj{"schema": obj{"allOf": []any{
				ref("Error"),
				props(obj{"code": obj{"const": status}, "type": enum(types...)}),
			}}}},
		}
		if status == http.StatusTooManyRequests {
			h := obj{"Retry-After": obj{"description": "whole seconds, at least 1, until the request would pass", "schema": integer}}
			maps.Copy(h, rateLimitHeaders)
			resp["headers"] = h
		}
		out[errorName(status)] = resp
	}
	return out
}

// rateLimitHeaders describe the limit closest to refusing a request, on
// every answer a rate limit counted (docs/limits.md#request-rates).
var rateLimitHeaders = obj{
	"RateLimit-Limit":     obj{"description": "how many requests the limit lets through at once (its burst); sent when a limit counts the request", "schema": integer},
	"RateLimit-Remaining": obj{"description": "how many may be sent now, this one counted", "schema": integer},
	"RateLimit-Reset":     obj{"description": "whole seconds until the limit lets its whole burst through again", "schema": integer},
}
