package openapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/botplatform/botplatform/internal/httpapi"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/openapi"
)

type noTunnels struct{}

func (noTunnels) Accept(http.ResponseWriter, *http.Request, string) error { return nil }

// serverDocument is the document of a server with every surface on, as
// serve has them.
func serverDocument(t *testing.T, chatPath string) []byte {
	t.Helper()
	return httpapi.Document(httpapi.Deps{ChatPath: chatPath, Version: "1.2.3", Metrics: metrics.New(), Tunnels: noTunnels{}, Console: http.NotFoundHandler()})
}

// load parses and validates a document with kin-openapi, as a consumer would.
func load(t *testing.T, doc []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	if err := d.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	return d
}

func TestDocumentValidates(t *testing.T) {
	for _, chatPath := range []string{"/chat", ""} {
		d := load(t, serverDocument(t, chatPath))
		if d.OpenAPI != "3.1.0" || !d.IsOpenAPI31OrLater() {
			t.Errorf("openapi %q, want 3.1.0", d.OpenAPI)
		}
		if d.Info.Version != "1.2.3" {
			t.Errorf("info.version %q, want the server's", d.Info.Version)
		}
		if d.Paths.Find(chatPath+"/{webhook}/conversations/{id}/listen") == nil {
			t.Errorf("chat path %q: no listenConversation under it", chatPath)
		}
	}
}

// TestValidatorRefuses makes sure the validation above can fail: a
// document with a dangling reference, or an operation without responses,
// is refused.
func TestValidatorRefuses(t *testing.T) {
	good := string(serverDocument(t, "/chat"))
	for name, bad := range map[string]string{
		"dangling reference":    strings.Replace(good, `"#/components/schemas/File"`, `"#/components/schemas/Fiel"`, 1),
		"duplicate operationId": strings.Replace(good, `"operationId":"getFile"`, `"operationId":"listFiles"`, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the mutation found nothing to change", name)
		}
		d, err := openapi3.NewLoader().LoadFromData([]byte(bad))
		if err == nil {
			err = d.Validate(context.Background())
		}
		if err == nil {
			t.Errorf("%s: kin-openapi accepts the document", name)
		}
	}
}

// TestEveryOperation: with every surface on, each described operation has
// a route, and each operation has what a client needs.
func TestEveryOperation(t *testing.T) {
	d := load(t, serverDocument(t, "/chat"))
	seen := map[string]bool{}
	for path, item := range d.Paths.Map() {
		for method, op := range item.Operations() {
			what := method + " " + path + " (" + op.OperationID + ")"
			seen[op.OperationID] = true
			if op.Summary == "" || len(op.Tags) != 1 {
				t.Errorf("%s: summary %q, tags %v", what, op.Summary, op.Tags)
			}
			if op.Responses.Value("500") == nil {
				t.Errorf("%s: no 500 response", what)
			}
			if op.RequestBody != nil && op.RequestBody.Value.Content["application/json"] != nil {
				for _, s := range []string{"400", "413", "415"} {
					if op.Responses.Value(s) == nil {
						t.Errorf("%s: reads a JSON body but has no %s response", what, s)
					}
				}
			}
			if op.Security != nil && len(*op.Security) > 0 && op.Responses.Value("401") == nil {
				t.Errorf("%s: needs credentials but has no 401 response", what)
			}
		}
	}
	for id := range openapi.Described {
		if !seen[id] {
			t.Errorf("operation %q is described but no route serves it", id)
		}
	}
	for _, id := range []string{"upsertFile", "createBot", "callAction", "getTableRow", "chatCreateUser", "chatListenConversation",
		"getFileContent", "getHealth", "getReadiness", "getMetrics", "getOpenAPIDocument", "openTunnel", "getConsole", "getConsoleAsset", "openConsole", "openRoot"} {
		if !seen[id] {
			t.Errorf("no operation %s", id)
		}
	}
}

// TestBuildNamesWhatIsMissing: a route without a description, or served
// twice, fails the build, naming it.
func TestBuildNamesWhatIsMissing(t *testing.T) {
	_, err := openapi.Build([]openapi.Route{
		{Method: "GET", Path: "/v1/files/{id}", ID: "getFile", Tag: "Files", Auth: openapi.Bot},
		{Method: "GET", Path: "/v1/files/{id}/again", ID: "getFile", Tag: "Files", Auth: openapi.Bot},
		{Method: "GET", Path: "/v1/nothing", ID: "getNothing", Tag: "Files"},
	}, openapi.Info{Version: "x"})
	if err == nil || !strings.Contains(err.Error(), `"getNothing"`) || !strings.Contains(err.Error(), "/v1/files/{id}/again") {
		t.Fatalf("Build: %v, want an error naming getNothing and the second getFile", err)
	}
}

// TestRateLimitResponses: every operation a rate limit may count (the
// authenticated ones, and the chat calls counted by address) declares 429
// with Retry-After and the RateLimit-* headers, which its success carries
// too; the others (health, metrics, file contents, tunnels) do not.
func TestRateLimitResponses(t *testing.T) {
	d := load(t, serverDocument(t, "/chat"))
	rl := d.Components.Responses["Error429"]
	if rl == nil || rl.Value.Headers["Retry-After"] == nil || rl.Value.Headers["RateLimit-Remaining"] == nil {
		t.Fatalf("Error429 lacks Retry-After or RateLimit-Remaining: %+v", rl)
	}
	limited := map[string]bool{"chatCreateUser": true, "chatProbe": true, "chatHello": true}
	unlimited := map[string]bool{"getHealth": true, "getReadiness": true, "getMetrics": true, "getOpenAPIDocument": true, "openTunnel": true,
		"getFileContent": true, "getPublicFileContent": true, "uploadFileContent": true}
	for path, item := range d.Paths.Map() {
		for method, op := range item.Operations() {
			what := method + " " + path + " (" + op.OperationID + ")"
			want := op.Security != nil && len(*op.Security) > 0 && !unlimited[op.OperationID] || limited[op.OperationID]
			if got := op.Responses.Value("429") != nil; got != want {
				t.Errorf("%s: 429 declared %v, want %v", what, got, want)
			}
			for code, r := range op.Responses.Map() {
				if code[0] == '2' && want && r.Value.Headers["RateLimit-Limit"] == nil {
					t.Errorf("%s: success %s without RateLimit-Limit", what, code)
				}
			}
		}
	}
}
