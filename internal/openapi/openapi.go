// Package openapi builds the server's OpenAPI 3.1 document from its route tables.
package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Route is one operation as a route table declares it.
type Route struct {
	Method string // GET, POST…
	Path   string // as served, with {name} parameters: /v1/files/{id}
	ID     string // operationId: the official client's name where it has one
	Tag    string // the surface (Admin, Files…)
	Auth   Auth
	// Body is the JSON Schema the route checks its request body against;
	// nil when the route reads no JSON body.
	Body json.RawMessage
}

// Auth is what a route requires of its caller.
type Auth string

const (
	Public    Auth = ""          // nothing (signed URLs carry their own proof)
	Token     Auth = "token"     // a bearer token
	Account   Auth = "account"   // a personal access token; x-workspace-id optional
	Workspace Auth = "workspace" // a personal access token and x-workspace-id
	Bot       Auth = "bot"       // a bot API key, or a personal access token, and x-bot-id
	ChatUser  Auth = "chatUser"  // a chat user's key (x-user-key)
	// Operator is a bearer token when the operator set one (/metrics).
	Operator Auth = "operator"
)

// security is what each Auth asks for, as security requirements.
var security = map[Auth][]map[string][]string{
	Token:     {{"bearer": {}}},
	Account:   {{"bearer": {}}},
	Workspace: {{"bearer": {}, "workspaceId": {}}},
	Bot:       {{"bearer": {}, "botId": {}}},
	ChatUser:  {{"userKey": {}}},
	Operator:  {{"bearer": {}}, {}},
}

// Info is what the document says of the server.
type Info struct {
	Version string
}

var paramRe = regexp.MustCompile(`\{([^}]+)\}`)

// Build returns the OpenAPI document of routes. Each route must have a
// description in this package (parameters, response, errors): it fails
// otherwise, naming them. (A description without a route is an optional
// surface left off, such as /metrics; the tests check there is none when
// every surface is on.)
func Build(routes []Route, info Info) ([]byte, error) {
	doc := document{
		OpenAPI: "3.1.0",
		Info:    obj{"title": "botplatform", "version": info.Version, "description": description},
		Tags:    tags,
		Paths:   map[string]map[string]*operation{},
		Components: obj{
			"securitySchemes": securitySchemes,
			"schemas":         schemas(),
			"responses":       errorResponses(),
		},
	}
	var problems []string
	used := map[string]bool{}
	for _, r := range routes {
		d, ok := descriptions[r.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s %s: no description of operation %q", r.Method, r.Path, r.ID))
			continue
		}
		if used[r.ID] {
			problems = append(problems, fmt.Sprintf("%s %s: operation %q is served twice", r.Method, r.Path, r.ID))
			continue
		}
		used[r.ID] = true
		item := doc.Paths[r.Path]
		if item == nil {
			item = map[string]*operation{}
			doc.Paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = d.operation(r)
	}
	if len(problems) > 0 {
		return nil, errors.New("openapi: " + strings.Join(problems, "; "))
	}
	return json.Marshal(doc)
}

// operation is d for route r: its parameters, body and responses, with the
// error statuses the route can answer.
func (d op) operation(r Route) *operation {
	o := &operation{ID: r.ID, Summary: d.summary, Description: d.description, Tags: []string{r.Tag}, Security: security[r.Auth]}
	for _, m := range paramRe.FindAllStringSubmatch(r.Path, -1) {
		o.Parameters = append(o.Parameters, parameter{Name: m[1], In: "path", Required: true, Schema: str})
	}
	o.Parameters = append(o.Parameters, d.params...)
	if r.Tag == "Files" && r.Auth == Bot {
		o.Parameters = append(o.Parameters, filesCallerHeaders...)
	}
	switch {
	case r.Body != nil:
		o.RequestBody = &requestBody{Required: true, Content: map[string]media{"application/json": {Schema: r.Body}}}
	case d.raw:
		o.RequestBody = &requestBody{Required: true, Content: map[string]media{"*/*": {}}}
	}
	status := d.status
	if status == 0 {
		status = 200
	}
	errs := d.errors(r)
	if slices.Contains(errs, 429) { // a rate limit counts it: its figures come on success too
		d.headers = maps.Clone(d.headers)
		if d.headers == nil {
			d.headers = obj{}
		}
		maps.Copy(d.headers, rateLimitHeaders)
	}
	o.Responses = map[string]any{fmt.Sprint(status): d.success()}
	for _, s := range errs {
		o.Responses[fmt.Sprint(s)] = obj{"$ref": "#/components/responses/" + errorName(s)}
	}
	maps.Copy(o.Responses, d.other)
	return o
}

// errors are the error statuses route r answers with d: 500 always, then
// those its authentication, body, parameters and own rules bring.
func (d op) errors(r Route) []int {
	set := map[int]bool{500: true}
	add := func(s ...int) {
		for _, x := range s {
			set[x] = true
		}
	}
	switch r.Auth {
	case Public, Operator: // the operator's token is refused in plain text
	default:
		add(401, 403, 429) // the rate limits count callers once authenticated
	}
	if r.Body != nil {
		add(400, 413, 415)
	}
	if len(d.params) > 0 {
		add(400)
	}
	if strings.Contains(r.Path, "{") {
		add(404)
	}
	add(d.errs...)
	return slices.Sorted(maps.Keys(set))
}

// success is d's successful response.
func (d op) success() obj {
	desc := d.returns
	if desc == "" {
		desc = "OK"
	}
	out := obj{"description": desc}
	if d.headers != nil {
		out["headers"] = d.headers
	}
	switch {
	case d.media == noBody:
	case d.media != "":
		out["content"] = obj{d.media: obj{"schema": orEmpty(d.result)}}
	default:
		out["content"] = obj{"application/json": obj{"schema": orEmpty(d.result)}}
	}
	return out
}

func orEmpty(s any) any {
	if s == nil {
		return obj{}
	}
	return s
}

const description = `The API of a botplatform server: the Admin, Files, Runtime and Tables APIs the official client
@botpress/client speaks, the Chat API of @botpress/chat, file contents behind signed URLs, and the operator's
endpoints. Operation ids are the official clients' names; the Chat API's are the chat client's names with the
prefix "chat" (its createUser is chatCreateUser), since the Runtime API has operations of the same names.
Query strings follow the clients: lists repeat their key (ids=a&ids=b) and tag filters are sent as
tags.<key>=<value> (or as URL-encoded JSON in tags). Errors carry the body {id, code, type, message, requestId};
the client chooses its error class from type.`

var tags = []obj{
	{"name": "Admin", "description": "Accounts, workspaces, members, bots and their keys, quotas and usage (/v1/admin)."},
	{"name": "Files", "description": "A bot's files, their indexing and search, knowledge bases (/v1/files)."},
	{"name": "Content", "description": "File contents through signed or public URLs: no credentials beyond the URL."},
	{"name": "Runtime", "description": "What bot code calls: users, conversations, messages, states, events, workflows, actions (/v1/chat)."},
	{"name": "Tables", "description": "A bot's tables and their rows (/v1/tables)."},
	{"name": "Chat", "description": "The Chat API end users talk to a bot through, under the chat URL and the bot's webhook id."},
	{"name": "Operations", "description": "Health, metrics, this document and the tunnels of bp dev."},
	{"name": "Webchat", "description": "The chat widget for websites: its script and a bot's full-page chat (/webchat/)."},
	{"name": "Console", "description": "The web console's page and assets (/console/): not an API, listed so every route is documented."},
}

var securitySchemes = obj{
	"bearer": obj{"type": "http", "scheme": "bearer",
		"description": "A personal access token (bp_pat_…) or, where a bot is the caller, a bot API key (bp_bak_…)."},
	"workspaceId": obj{"type": "apiKey", "in": "header", "name": "x-workspace-id", "description": "The workspace the call acts in."},
	"botId":       obj{"type": "apiKey", "in": "header", "name": "x-bot-id", "description": "The bot the call acts for."},
	"userKey": obj{"type": "apiKey", "in": "header", "name": "x-user-key",
		"description": "A chat user's key: the key createUser returned, or a JWT (HS256) the caller signed with the bot's encryption key."},
}
