package harness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Client calls one server's APIs with an access token in a workspace.
type Client struct {
	URL         string // the server's base URL
	Token       string // personal access token
	WorkspaceID string
	HTTP        *http.Client
}

// NewHTTP is an HTTP client for many concurrent keep-alive requests to one
// server; timeout guards against hangs.
func NewHTTP(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Timeout: timeout, Transport: tr}
}

// StatusError is a response outside 2xx.
type StatusError struct {
	Method, URL string
	Status      int
	Body        string
}

func (e *StatusError) Error() string {
	// Signed URLs are long and say nothing: show the path only.
	target := e.URL
	if u, err := url.Parse(e.URL); err == nil {
		target = u.Path
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, target, e.Status, Tail(e.Body, 500))
}

// Status is the HTTP status of err's response, or 0 when err is not a
// response outside 2xx (no answer at all: the request may or may not have
// taken effect).
func Status(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// Do sends a request to an absolute URL or a path of the server. body is
// nil, []byte (sent as is) or a value sent as JSON; out, when not nil,
// receives the JSON of a 2xx answer.
func (c *Client) Do(ctx context.Context, method, target string, hdr http.Header, body, out any) error {
	if strings.HasPrefix(target, "/") {
		target = c.URL + target
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
		if hdr == nil {
			hdr = http.Header{}
		}
		hdr.Set("Content-Type", "application/json")
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Method: method, URL: target, Status: resp.StatusCode, Body: string(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: %v in %s", method, target, err, Tail(string(data), 300))
		}
	}
	return nil
}

func (c *Client) auth(extra ...string) http.Header {
	h := http.Header{"Authorization": {"Bearer " + c.Token}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

// Admin calls the Admin API in the client's workspace.
func (c *Client) Admin(ctx context.Context, method, path string, body, out any) error {
	return c.Do(ctx, method, path, c.auth("x-workspace-id", c.WorkspaceID), body, out)
}

// CounterBotJS is the bot of the reliability tools: per conversation and per user it counts
// messages in its state, remembers the conversation's previous message, and
// answers each message once with all three, so that a lost or repeated
// state write, and a lost or doubled reply, show in the replies.
const CounterBotJS = `bot.on.message('text', async ({ message, state, client }) => {
  const c = state.conversation, u = state.user
  c.n = (c.n || 0) + 1
  u.n = (u.n || 0) + 1
  const prev = c.last || '-'
  c.last = message.id
  await client.createMessage({ conversationId: message.conversationId,
    payload: { type: 'text', text: 're ' + message.id + ' c=' + c.n + ' u=' + u.n + ' prev=' + prev } })
})
`

// Bot is what the tools need of a bot.
type Bot struct {
	ID      string
	ChatURL string // its Chat API base (webhookUrl)
}

// CreateBot creates a bot running code.
func (c *Client) CreateBot(ctx context.Context, name, code string) (Bot, error) {
	var out struct {
		Bot struct {
			ID           string `json:"id"`
			Integrations struct {
				Chat struct {
					WebhookURL string `json:"webhookUrl"`
				} `json:"chat"`
			} `json:"integrations"`
		} `json:"bot"`
	}
	if err := c.Admin(ctx, http.MethodPost, "/v1/admin/bots", map[string]any{"name": name, "code": code}, &out); err != nil {
		return Bot{}, err
	}
	return Bot{ID: out.Bot.ID, ChatURL: out.Bot.Integrations.Chat.WebhookURL}, nil
}

// ListBots reads one page of the workspace's bots.
func (c *Client) ListBots(ctx context.Context) (int, error) {
	var out struct {
		Bots []json.RawMessage `json:"bots"`
	}
	err := c.Admin(ctx, http.MethodGet, "/v1/admin/bots?pageSize=20", nil, &out)
	return len(out.Bots), err
}

// LogLine is a line of a bot's logs.
type LogLine struct {
	Timestamp, Level, Message, ConversationID string
}

// BotLogs reads up to a page of the bot's log lines since start, of one
// level ("" for all).
func (c *Client) BotLogs(ctx context.Context, botID string, start time.Time, level string) ([]LogLine, error) {
	q := url.Values{"timeStart": {start.UTC().Format(time.RFC3339Nano)}}
	if level != "" {
		q.Set("level", level)
	}
	var out struct {
		Logs []LogLine `json:"logs"`
	}
	err := c.Admin(ctx, http.MethodGet, "/v1/admin/bots/"+botID+"/logs?"+q.Encode(), nil, &out)
	return out.Logs, err
}

// Usage is the workspace's usage of a storage quota type and its limit.
func (c *Client) Usage(ctx context.Context, typ string) (value, quota int64, err error) {
	var out struct {
		Usages []struct {
			Type  string `json:"type"`
			Value int64  `json:"value"`
			Quota int64  `json:"quota"`
		} `json:"usages"`
	}
	if err := c.Admin(ctx, http.MethodGet, "/v1/admin/workspaces/"+c.WorkspaceID+"/usages?type="+typ, nil, &out); err != nil {
		return 0, 0, err
	}
	if len(out.Usages) != 1 || out.Usages[0].Type != typ {
		return 0, 0, fmt.Errorf("listWorkspaceUsages?type=%s answered %+v", typ, out.Usages)
	}
	return out.Usages[0].Value, out.Usages[0].Quota, nil
}

// Quota is getWorkspaceQuota's value for a type.
func (c *Client) Quota(ctx context.Context, typ string) (int64, error) {
	var out struct {
		Quota struct {
			Value int64 `json:"value"`
		} `json:"quota"`
	}
	err := c.Admin(ctx, http.MethodGet, "/v1/admin/workspaces/"+c.WorkspaceID+"/quota?type="+typ, nil, &out)
	return out.Quota.Value, err
}

// File is a file as the Files API shows it.
type File struct {
	ID                 string            `json:"id"`
	Key                string            `json:"key"`
	URL                string            `json:"url"`
	UploadURL          string            `json:"uploadUrl"`
	Size               *int64            `json:"size"`
	Index              bool              `json:"index"`
	Status             string            `json:"status"`
	FailedStatusReason string            `json:"failedStatusReason"`
	Tags               map[string]string `json:"tags"`
}

// Files calls the Files API as the client's token for botID.
func (c *Client) Files(ctx context.Context, method, path, botID string, body, out any) error {
	return c.Do(ctx, method, path, c.auth("x-bot-id", botID), body, out)
}

// UpsertFile calls upsertFile with body.
func (c *Client) UpsertFile(ctx context.Context, botID string, body map[string]any) (File, error) {
	var out struct {
		File File `json:"file"`
	}
	err := c.Files(ctx, http.MethodPut, "/v1/files", botID, body, &out)
	return out.File, err
}

// Upload sends content to a file's uploadUrl.
func (c *Client) Upload(ctx context.Context, uploadURL string, content []byte) error {
	return c.Do(ctx, http.MethodPut, uploadURL, http.Header{"Content-Type": {"application/octet-stream"}}, content, nil)
}

// ListFiles reads every file of the bot, page by page.
func (c *Client) ListFiles(ctx context.Context, botID string) ([]File, error) {
	var all []File
	next := ""
	for {
		var out struct {
			Files []File `json:"files"`
			Meta  struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		q := url.Values{"pageSize": {"100"}}
		if next != "" {
			q.Set("nextToken", next)
		}
		if err := c.Files(ctx, http.MethodGet, "/v1/files?"+q.Encode(), botID, nil, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Files...)
		if next = out.Meta.NextToken; next == "" {
			return all, nil
		}
	}
}

// Download reads a file's content from its url and returns its size and
// SHA-256 (hex).
func (c *Client) Download(ctx context.Context, fileURL string) (int64, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fileURL, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, "", &StatusError{Method: http.MethodGet, URL: fileURL, Status: resp.StatusCode, Body: string(b)}
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		return n, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// SearchFiles runs searchFiles for the bot and returns how many passages
// came back.
func (c *Client) SearchFiles(ctx context.Context, botID, query string) (int, error) {
	var out struct {
		Passages []json.RawMessage `json:"passages"`
	}
	err := c.Files(ctx, http.MethodGet, "/v1/files/search?"+url.Values{"query": {query}}.Encode(), botID, nil, &out)
	return len(out.Passages), err
}

// ChatUser is a user of a bot's Chat API.
type ChatUser struct {
	ID, Key string
}

// Chat calls a bot's Chat API (chatURL is its webhookUrl) as the user with
// that key ("" for none).
func (c *Client) Chat(ctx context.Context, method, chatURL, path, key string, body, out any) error {
	var hdr http.Header
	if key != "" {
		hdr = http.Header{"X-User-Key": {key}}
	}
	return c.Do(ctx, method, chatURL+path, hdr, body, out)
}

// CreateChatUser creates a user of the bot's Chat API.
func (c *Client) CreateChatUser(ctx context.Context, chatURL string) (ChatUser, error) {
	var out struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		Key string `json:"key"`
	}
	err := c.Chat(ctx, http.MethodPost, chatURL, "/users", "", map[string]any{}, &out)
	return ChatUser{ID: out.User.ID, Key: out.Key}, err
}

// CreateConversation creates a conversation owned by the user.
func (c *Client) CreateConversation(ctx context.Context, chatURL string, u ChatUser) (string, error) {
	var out struct {
		Conversation struct {
			ID string `json:"id"`
		} `json:"conversation"`
	}
	err := c.Chat(ctx, http.MethodPost, chatURL, "/conversations", u.Key, map[string]any{}, &out)
	return out.Conversation.ID, err
}

// Message is a Chat API message.
type Message struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversationId"`
	UserID         string `json:"userId"`
	CreatedAt      string `json:"createdAt"`
	Payload        struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"payload"`
}

// SendText sends a text message as the user.
func (c *Client) SendText(ctx context.Context, chatURL string, u ChatUser, conv, text string) (Message, error) {
	var out struct {
		Message Message `json:"message"`
	}
	err := c.Chat(ctx, http.MethodPost, chatURL, "/messages", u.Key,
		map[string]any{"conversationId": conv, "payload": map[string]any{"type": "text", "text": text}}, &out)
	return out.Message, err
}

// ListMessages reads the conversation's messages, oldest first (the API
// lists newest first, page by page): the newest pages of 20 only, when
// pages > 0.
func (c *Client) ListMessages(ctx context.Context, chatURL string, u ChatUser, conv string, pages int) ([]Message, error) {
	var all []Message
	next := ""
	for page := 1; ; page++ {
		var out struct {
			Messages []Message `json:"messages"`
			Meta     struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		path := "/conversations/" + url.PathEscape(conv) + "/messages"
		if next != "" {
			path += "?nextToken=" + url.QueryEscape(next)
		}
		if err := c.Chat(ctx, http.MethodGet, chatURL, path, u.Key, nil, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Messages...)
		if next = out.Meta.NextToken; next == "" || page == pages {
			break
		}
	}
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	return all, nil
}

// Bootstrap is DATA/bootstrap.json, written at the first start.
type Bootstrap struct {
	Token       string `json:"token"`
	WorkspaceID string `json:"workspaceId"`
}

// ReadBootstrap reads the first start's credentials from the data
// directory.
func ReadBootstrap(dataDir string) (Bootstrap, error) {
	var b Bootstrap
	raw, err := os.ReadFile(filepath.Join(dataDir, "bootstrap.json"))
	if err != nil {
		return b, err
	}
	return b, json.Unmarshal(raw, &b)
}
