package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/openapi"
)

type noTunnels struct{}

func (noTunnels) Accept(http.ResponseWriter, *http.Request, string) error { return nil }

// fullDeps are Deps with every optional surface on, as serve has them;
// nothing is called while the tables are built.
func fullDeps(chatPath string) Deps {
	return Deps{ChatPath: chatPath, Metrics: metrics.New(), Tunnels: noTunnels{}, Version: "test", Console: http.NotFoundHandler()}
}

var paramRe = regexp.MustCompile(`\{[^}]+\}`)

// TestRoutesDocumented routes a request for each operation of the document
// through the real muxes: each must reach a pattern of its own table,
// through a mount of the root's for a surface, and each pattern of every
// table must serve at least one operation. The document must list exactly
// the tables' operations, with the body schemas their routes check.
func TestRoutesDocumented(t *testing.T) {
	for _, chatPath := range []string{"/chat", "/talk/v2/", ""} {
		t.Run("chat path "+chatPath, func(t *testing.T) {
			s := build(fullDeps(chatPath))
			root := s.tables[0]
			want := map[string]openapi.Route{}
			for _, tb := range s.tables {
				served := map[string]bool{}
				for _, op := range tb.ops {
					what := op.Method + " " + op.Path + " (" + op.ID + ")"
					want[op.Method+" "+op.Path] = op
					req := httptest.NewRequest(op.Method, paramRe.ReplaceAllString(op.Path, "sample"), nil)
					if _, p := tb.mux.Handler(req); !slices.Contains(tb.patterns, p) {
						t.Errorf("%s: the %s table routes it to %q, not to a pattern of its own", what, tb.tag, p)
					} else {
						served[p] = true
					}
					if tb == root {
						continue
					}
					if _, p := root.mux.Handler(req); !slices.Contains(root.mounts, p) {
						t.Errorf("%s: the root routes it to %q, not to the %s table", what, p, tb.tag)
					}
				}
				for _, p := range tb.patterns {
					if !served[p] {
						t.Errorf("%s table: pattern %q serves no operation of the document", tb.tag, p)
					}
				}
			}
			if len(want) < 140 {
				t.Errorf("only %d operations: a table was left out", len(want))
			}

			var doc struct {
				Paths map[string]map[string]struct {
					OperationID string `json:"operationId"`
					RequestBody *struct {
						Content map[string]struct {
							Schema json.RawMessage `json:"schema"`
						} `json:"content"`
					} `json:"requestBody"`
				} `json:"paths"`
			}
			if err := json.Unmarshal(s.doc, &doc); err != nil {
				t.Fatal(err)
			}
			for path, item := range doc.Paths {
				for method, o := range item {
					key := strings.ToUpper(method) + " " + path
					r, ok := want[key]
					if !ok {
						t.Errorf("the document has %s (%s), which no route table serves", key, o.OperationID)
						continue
					}
					delete(want, key)
					if o.OperationID != r.ID {
						t.Errorf("%s: operationId %q, want %q", key, o.OperationID, r.ID)
					}
					var got json.RawMessage
					if o.RequestBody != nil {
						got = o.RequestBody.Content["application/json"].Schema
					}
					if !sameJSON(got, r.Body) {
						t.Errorf("%s: the document's body schema is\n%s\nbut the route checks bodies against\n%s", key, got, r.Body)
					}
				}
			}
			for key, r := range want {
				t.Errorf("%s (%s) is not in the document", key, r.ID)
			}
		})
	}
}

func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
