package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/botplatform/botplatform/internal/syncbuf"
)

// TestOpenAPIServed fetches /openapi.json from a real server, loads it with
// kin-openapi, and sends real requests of every surface through it: each
// request must match an operation and validate against it, and each
// response (errors included) must validate against the operation's.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	s := startBackendWith(t, "sqlite", "--chat-url", "http://127.0.0.1:1/talk")
	res, err := s.http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") == "" {
		t.Errorf("GET /openapi.json: ETag %q, Cache-Control %q: want both, so that it can be cached", etag, res.Header.Get("Cache-Control"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the served document is not valid: %v", err)
	}
	if doc.Paths.Find("/talk/{webhook}/messages") == nil {
		t.Errorf("the document does not put the Chat API under the server's chat path /talk")
	}
	doc.Servers = openapi3.Servers{{URL: s.URL}} // the document's paths are relative to the server it came from
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	api := &oaClient{t: t, s: s, router: router}

	// Operations and Admin.
	api.raw("GET", "/openapi.json", "", map[string]string{"If-None-Match": etag}, http.StatusNotModified)
	api.call("GET", "/healthz", nil, nil, 200)
	api.raw("GET", "/metrics", "", nil, 200)
	// The console's page is HTML: read as plain text, as kin-openapi has no
	// decoder of its own for it.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	api.raw("GET", "/console/", "", nil, 200)
	owner := map[string]string{"Authorization": "Bearer " + s.Boot.Token, "x-workspace-id": s.Boot.WorkspaceID}
	api.call("GET", "/v1/admin/account/me", nil, owner, 200)
	api.call("GET", "/v1/admin/account/me", nil, nil, 401)
	api.call("GET", "/v1/admin/workspaces?pageSize=5", nil, owner, 200)
	bot := api.call("POST", "/v1/admin/bots", map[string]any{"name": "documented", "tags": map[string]any{"env": "test"}}, owner, 200)["bot"].(map[string]any)
	botID := bot["id"].(string)
	api.call("GET", "/v1/admin/bots?tags.env=test&sortField=createdAt", nil, owner, 200)
	api.call("GET", "/v1/admin/bots/"+botID, nil, owner, 200)
	api.call("GET", "/v1/admin/bots/bot_missing", nil, owner, 404)
	// A body the document refuses is the one the server refuses: the
	// document shows the schema the route checks bodies with.
	api.invalid("POST", "/v1/admin/bots", map[string]any{"name": "x", "colour": "red"}, owner, 400)
	api.invalid("PUT", "/v1/admin/workspace-members/m1", map[string]any{"role": "emperor"}, owner, 400)
	bak := api.call("POST", "/v1/admin/bots/baks", map[string]any{"botId": botID, "note": "openapi"}, owner, 200)["value"].(string)
	asBot := map[string]string{"Authorization": "Bearer " + bak, "x-bot-id": botID}

	// Files and content.
	content := "hello, documented world"
	f := api.call("PUT", "/v1/files", map[string]any{"key": "docs/hello.txt", "size": len(content), "contentType": "text/plain",
		"tags": map[string]any{"kind": "greeting"}}, asBot, 200)["file"].(map[string]any)
	api.raw("PUT", strings.TrimPrefix(f["uploadUrl"].(string), s.URL), content, map[string]string{"Content-Type": "text/plain"}, 200)
	got := api.call("GET", "/v1/files/"+f["id"].(string), nil, asBot, 200)["file"].(map[string]any)
	api.raw("GET", strings.TrimPrefix(got["url"].(string), s.URL), "", nil, 200)
	api.raw("GET", strings.TrimPrefix(got["url"].(string), s.URL), "", map[string]string{"Range": "bytes=0-4"}, http.StatusPartialContent)
	api.call("GET", "/v1/files?tags.kind=greeting&ids="+f["id"].(string), nil, asBot, 200)
	api.call("GET", "/v1/files/tags", nil, asBot, 200)
	api.call("GET", "/v1/files/missing", nil, asBot, 404)
	api.invalid("PUT", "/v1/files", map[string]any{"key": "k"}, asBot, 400)

	// Runtime and Tables.
	u := api.call("POST", "/v1/chat/users", map[string]any{"name": "Ada", "tags": map[string]any{}}, asBot, 201)["user"].(map[string]any)
	api.call("GET", "/v1/chat/users/"+u["id"].(string), nil, asBot, 200)
	api.call("GET", "/v1/chat/users?sortField=createdAt&sortDirection=desc", nil, asBot, 200)
	api.call("POST", "/v1/chat/states/user/"+u["id"].(string)+"/prefs/get-or-set", map[string]any{"payload": map[string]any{}}, asBot, 200)
	api.call("POST", "/v1/tables", map[string]any{"name": "NotesTable", "schema": map[string]any{"type": "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}}}}, asBot, 200)
	api.call("POST", "/v1/tables/NotesTable/rows", map[string]any{"rows": []any{map[string]any{"text": "one"}}}, asBot, 200)
	api.call("POST", "/v1/tables/NotesTable/rows/find", map[string]any{"limit": 10}, asBot, 200)
	api.call("GET", "/v1/tables", nil, asBot, 200)

	// Chat.
	chat := "/talk/" + bot["integrations"].(map[string]any)["chat"].(map[string]any)["webhookId"].(string)
	api.raw("GET", chat+"/hello/", "", nil, 200)
	cu := api.call("POST", chat+"/users", map[string]any{"name": "Grace"}, nil, 201)
	key := map[string]string{"x-user-key": cu["key"].(string)}
	api.call("GET", chat+"/users/me", nil, key, 200)
	conv := api.call("POST", chat+"/conversations", map[string]any{}, key, 201)["conversation"].(map[string]any)["id"].(string)
	api.call("POST", chat+"/messages", map[string]any{"conversationId": conv, "payload": map[string]any{"type": "text", "text": "hi"}}, key, 201)
	api.call("GET", chat+"/conversations/"+conv+"/messages", nil, key, 200)
	api.invalid("POST", chat+"/messages", map[string]any{"conversationId": conv, "payload": map[string]any{"type": "text", "text": ""}}, key, 400)
	api.call("GET", chat+"/users/me", nil, map[string]string{"x-user-key": "not-a-key"}, 401)
}

// TestOpenAPICommand: `botplatform openapi` prints the document serve
// serves, for the same flags.
func TestOpenAPICommand(t *testing.T) {
	t.Parallel()
	flags := []string{"--chat-url", "http://127.0.0.1:1/talk"}
	s := startBackendWith(t, "sqlite", flags...)
	res, err := s.http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var out, errOut syncbuf.Buffer
	if err := run(context.Background(), append([]string{"openapi"}, flags...), &out, &errOut); err != nil {
		t.Fatalf("botplatform openapi: %v\n%s", err, errOut.String())
	}
	if printed := bytes.TrimSuffix([]byte(out.String()), []byte("\n")); !bytes.Equal(printed, served) {
		t.Errorf("botplatform openapi printed %d bytes that differ from the %d of /openapi.json", len(printed), len(served))
	}
	out = syncbuf.Buffer{}
	if err := run(context.Background(), []string{"openapi"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"/chat/{webhook}/messages"`) || strings.Contains(out.String(), "/talk/") {
		t.Errorf("without --chat-url, the document's Chat API is not under /chat")
	}
}

// oaClient sends requests and checks them, and their responses, against
// the document.
type oaClient struct {
	t      *testing.T
	s      *testServer
	router routers.Router
}

var validation = &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}

// call sends a JSON request that must validate and expects status; the
// response must validate too. It returns the response's JSON object.
func (c *oaClient) call(method, path string, body any, hdr map[string]string, status int) map[string]any {
	c.t.Helper()
	b := c.send(method, path, jsonBody(c.t, body), hdr, status, true)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		c.t.Fatalf("%s %s: the body is not a JSON object (%v): %s", method, path, err, b)
	}
	return m
}

// raw is call with a body sent as is (none when empty), for content URLs.
func (c *oaClient) raw(method, path, body string, hdr map[string]string, status int) {
	c.t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	c.send(method, path, b, hdr, status, true)
}

// invalid sends a body the document refuses: the server must refuse it
// too, with an error response the document describes.
func (c *oaClient) invalid(method, path string, body any, hdr map[string]string, status int) {
	c.t.Helper()
	c.send(method, path, jsonBody(c.t, body), hdr, status, false)
}

func jsonBody(t *testing.T, body any) []byte {
	if body == nil {
		return nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (c *oaClient) send(method, path string, body []byte, hdr map[string]string, status int, valid bool) []byte {
	c.t.Helper()
	what := method + " " + path
	req, err := http.NewRequest(method, c.s.URL+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil && hdr["Content-Type"] == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Fatalf("%s: no operation of the document: %v", what, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: validation}
	err = openapi3filter.ValidateRequest(context.Background(), in)
	switch {
	case valid && err != nil:
		c.t.Errorf("%s (%s): the request does not validate: %v", what, route.Operation.OperationID, err)
	case !valid && err == nil:
		c.t.Errorf("%s (%s): the document accepts a body the test expects refused", what, route.Operation.OperationID)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.s.http.Do(req.WithContext(ctx))
	if err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != status {
		c.t.Fatalf("%s: status %d, want %d: %s", what, res.StatusCode, status, tail(string(b), 500))
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(b)), Options: validation})
	if err != nil {
		c.t.Errorf("%s (%s): the %d response does not validate: %v\n%s", what, route.Operation.OperationID, res.StatusCode, err, tail(string(b), 500))
	}
	return b
}
