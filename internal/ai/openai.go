package ai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/config"
)

// Defaults of the OpenAI client.
const (
	Attempts       = 4                      // per Complete, in all
	DefaultBackoff = 500 * time.Millisecond // first wait between attempts, then doubled
)

// OpenAI completes requests with POST {URL}/chat/completions of an
// OpenAI-compatible server. It is safe for concurrent use.
type OpenAI struct {
	// Backoff is the first wait before trying again (DefaultBackoff),
	// doubled before each later attempt; tests shorten it. Set it before
	// the first Complete.
	Backoff time.Duration

	server
	servers map[string]server // by name (Config.Servers)
	models  map[string]string
	timeout time.Duration
	client  *http.Client
}

var _ Model = (*OpenAI)(nil)

// New checks c and returns a client of its server. c.URL must be an
// absolute http or https URL (the API base, e.g. https://host/v1), and
// c.Models must name a model for each of Inexpensive, Balanced and
// Accurate. client nil means a new client; each request is bounded by
// c.Timeout (--ai-timeout's default when 0) either way.
func New(c Config, client *http.Client) (*OpenAI, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ai: the model server URL %q is not an absolute http(s) URL (e.g. https://api.openai.com/v1)", c.URL)
	}
	models := make(map[string]string, len(c.Models))
	var missing []string
	for _, t := range []string{Inexpensive, Balanced, Accurate} {
		name := strings.TrimSpace(c.Models[t])
		if name == "" {
			missing = append(missing, t)
		}
		models[t] = name
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("ai: no model name for model type %s", strings.Join(missing, ", "))
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = config.Defaults().AITimeout
	}
	if client == nil {
		client = &http.Client{}
	}
	servers := map[string]server{}
	for name, srv := range c.Servers {
		u, err := url.Parse(srv.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("ai: the URL %q of model server %s is not an absolute http(s) URL", srv.URL, name)
		}
		servers[name] = server{strings.TrimRight(srv.URL, "/") + "/chat/completions", srv.Key}
	}
	return &OpenAI{
		Backoff: DefaultBackoff,
		server:  server{strings.TrimRight(c.URL, "/") + "/chat/completions", c.Key},
		servers: servers,
		models:  models,
		timeout: timeout,
		client:  client,
	}, nil
}

// server is where a model's requests go: {URL}/chat/completions, with
// its key.
type server struct {
	url, key string
}

// route is the server of r.Model, which it turns into the name that
// server knows: a model name ending in @<server> (Config.Servers) is that
// server's model; any other, the main server's.
func (o *OpenAI) route(r *ChatRequest) server {
	if i := strings.LastIndexByte(r.Model, '@'); i > 0 {
		if srv, ok := o.servers[r.Model[i+1:]]; ok {
			r.Model = r.Model[:i]
			return srv
		}
	}
	return o.server
}

// ModelName is the model name configured for modelType ("" is Balanced),
// or "" for an unknown type.
func (o *OpenAI) ModelName(modelType string) string {
	if modelType == "" {
		modelType = Balanced
	}
	return o.models[modelType]
}

// Complete sends r to the model of r.ModelType at temperature 0. Status
// 429 and 5xx and network errors are tried again, Attempts in all; errors
// start with "model server: " and name the status and the server's
// message.
func (o *OpenAI) Complete(ctx context.Context, r Request) (Response, error) {
	name := o.ModelName(r.ModelType)
	if name == "" {
		return Response{}, fmt.Errorf("ai: unknown model type %q (want %s, %s or %s)", r.ModelType, Inexpensive, Balanced, Accurate)
	}
	zero := 0.0
	req := ChatRequest{Model: name, MaxTokens: max(r.MaxTokens, 0), Temperature: &zero}
	if r.System != "" {
		req.Messages = append(req.Messages, ChatMessage{Role: "system", Content: r.System})
	}
	user := ChatMessage{Role: "user", Content: r.Prompt}
	if len(r.Images) > 0 {
		parts := []ContentPart{{Type: "text", Text: r.Prompt}}
		for _, img := range r.Images {
			mime := img.MIME
			if mime == "" {
				mime = http.DetectContentType(img.Data)
			}
			parts = append(parts, ContentPart{Type: "image_url", ImageURL: &ImageURL{
				URL: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(img.Data),
			}})
		}
		user.Content = parts
	}
	req.Messages = append(req.Messages, user)
	ans, err := o.Chat(ctx, req)
	if err != nil {
		return Response{}, err
	}
	return Response{Text: ans.Content, Model: name, InputTokens: ans.InputTokens, OutputTokens: ans.OutputTokens}, nil
}

// contentText is a message's content: a string (null is ""), or, from some
// servers, an array of parts whose texts are joined.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content is neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
