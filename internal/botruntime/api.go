package botruntime

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
)

// Bot code's client reaches the Runtime and Tables APIs (its states,
// users, conversations, events, workflows, tables, …) through the server's
// own HTTP handler, served in-process as the bot: the same routes, checks,
// errors and answers as for a bot calling over HTTP with its API key.

// SetAPI sets the handler bot code's API calls are served by (the whole
// server's); call it before Run.
func (r *Runtime) SetAPI(h http.Handler) { r.apiHandler = h }

// apiPrefixes are the surfaces bot code's client may call.
var apiPrefixes = []string{"/v1/chat/", "/v1/tables"}

// apiCall is what the prelude sends for one operation: the request the
// official client would make.
type apiCall struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`  // escaped, without query
	Query  string          `json:"query"` // encoded as the official client does
	Body   json.RawMessage `json:"body"`
}

// response is an in-process response.
type response struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *response) Header() http.Header         { return w.header }
func (w *response) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *response) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}

func (c *call) api(in []byte) (any, error) {
	var a apiCall
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	allowed := false
	for _, p := range apiPrefixes {
		allowed = allowed || strings.HasPrefix(a.Path, p)
	}
	if !allowed || strings.Contains(a.Path, "..") {
		return nil, platform.Invalid("path", "bot code calls the Runtime and Tables APIs only")
	}
	if c.r.apiHandler == nil {
		return nil, platform.Errorf(platform.TypeInternal, "the API is not served to bot code")
	}
	target := a.Path
	if a.Query != "" {
		target += "?" + a.Query
	}
	var body *bytes.Reader
	if len(a.Body) > 0 && a.Method != http.MethodGet && a.Method != http.MethodDelete {
		body = bytes.NewReader(a.Body)
	} else {
		body = bytes.NewReader(nil)
	}
	ctx := files.WithCaller(c.ctx, &files.Caller{BotID: c.bot.ID, WorkspaceID: c.bot.WorkspaceID, CanWrite: true,
		Owner: platform.FileOwner{Type: "bot", ID: c.bot.ID}})
	req, err := http.NewRequestWithContext(ctx, a.Method, target, body)
	if err != nil {
		return nil, platform.Invalid("path", "%v", err)
	}
	req.RemoteAddr = "bot-code"
	if body.Len() > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	w := &response{header: http.Header{}}
	c.r.apiHandler.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 {
		var e struct{ Type, Message string }
		_ = json.Unmarshal(w.body.Bytes(), &e)
		if e.Type == "" {
			e.Type, e.Message = string(platform.TypeInternal), "internal error"
		}
		return nil, &platform.Error{Type: platform.ErrorType(e.Type), Message: e.Message}
	}
	return json.RawMessage(bytes.Clone(w.body.Bytes())), nil
}
