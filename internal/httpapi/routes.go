package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/openapi"
)

// table is a route table: the mux that serves a surface, and what it holds
// for the OpenAPI document (the patterns it serves and the operations
// behind them, each with the schema its body is checked against).
type table struct {
	tag      string
	mux      *http.ServeMux
	patterns []string
	ops      []openapi.Route
	mounts   []string // the root's: patterns a surface's table serves
}

func newTable(tag string) *table { return &table{tag: tag, mux: http.NewServeMux()} }

// handle serves pattern ("METHOD /path") with h as operation id, whose JSON
// body is checked against body (nil: the route reads none).
func (t *table) handle(pattern, id string, body *jsonbody.Schema, h http.Handler) {
	t.serve(pattern, t.op(pattern, id, body, h))
}

// serve serves pattern with h, which answers the operations declared with
// op: the pattern is not itself one.
func (t *table) serve(pattern string, h http.Handler) {
	t.mux.Handle(pattern, h)
	t.patterns = append(t.patterns, pattern)
}

// mount serves patterns with h, which routes another table (root only).
func (t *table) mount(h http.Handler, patterns ...string) {
	for _, p := range patterns {
		t.mux.Handle(p, h)
	}
	t.mounts = append(t.mounts, patterns...)
}

// op declares operation id, at pattern as the document shows it (with its
// method), and returns h, whose decode checks bodies against body.
func (t *table) op(pattern, id string, body *jsonbody.Schema, h http.Handler) http.Handler {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("httpapi: operation " + id + ": pattern " + pattern + " has no method")
	}
	doc := openapi.Route{Method: method, Path: path, ID: id, Tag: t.tag}
	if s, ok := h.(secured); ok {
		doc.Auth = s.auth
	}
	if body != nil {
		doc.Body = body.Source
	}
	t.ops = append(t.ops, doc)
	if body == nil {
		return h
	}
	// The route's body schema travels with the request to decode.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt, ok := r.Context().Value(routeKey{}).(*route); ok {
			rt.body = body
		}
		h.ServeHTTP(w, r)
	})
}

// secured is a handler that authenticates its caller as auth says: its
// route records it for the document.
type secured struct {
	http.Handler
	auth openapi.Auth
}

// routeBody is the schema the route r matched checks its body against.
func routeBody(r *http.Request) (*jsonbody.Schema, error) {
	if rt, ok := r.Context().Value(routeKey{}).(*route); ok && rt.body != nil {
		return rt.body, nil
	}
	return nil, fmt.Errorf("httpapi: %s %s reads a JSON body its route declares no schema for", r.Method, r.URL.Path)
}
