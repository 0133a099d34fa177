package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

var errorIDRe = regexp.MustCompile(`^err_\d{14}x[0-9A-F]{8}$`)

// An internal failure (here: the database is gone) answers 500 Internal with
// a safe message naming the request id; the cause goes to the log only.
func TestInternalErrorsDoNotLeak(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, backend)
			e.admin = admin.New(e.st, platform.SystemClock{}, admin.Config{ChatURL: "http://127.0.0.1/chat"}) // no cache: every request asks the database
			var logs syncbuf.Buffer
			srv := httptest.NewServer(e.server(t, slog.New(slog.NewTextHandler(&logs, nil))))
			defer srv.Close()
			boot := e.boot
			e.st.Close()

			for _, path := range []string{"/healthz", "/v1/admin/bots"} {
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				req.Header.Set("Authorization", "Bearer "+boot.Token)
				req.Header.Set("x-workspace-id", boot.WorkspaceID)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var body map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				reqID := resp.Header.Get("x-request-id")
				if resp.StatusCode != 500 || body["type"] != "Internal" || body["code"] != float64(500) {
					t.Fatalf("%s: status %d, body %v; want 500 Internal", path, resp.StatusCode, body)
				}
				if !errorIDRe.MatchString(body["id"].(string)) {
					t.Errorf("%s: error id %q", path, body["id"])
				}
				msg := body["message"].(string)
				if strings.Contains(msg, "sql") || strings.Contains(msg, "closed") || !strings.Contains(msg, reqID) {
					t.Errorf("%s: message %q leaks the cause or lacks the request id %s", path, msg, reqID)
				}
				if !strings.Contains(logs.String(), "request_id="+reqID) || !strings.Contains(logs.String(), "closed") {
					t.Errorf("%s: the log lacks the cause for request %s:\n%s", path, reqID, logs.String())
				}
			}
		})
	}
}
