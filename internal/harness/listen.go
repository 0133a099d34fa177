package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Signal is one signal of a conversation's event stream.
type Signal struct {
	Type string `json:"type"`
	Data struct {
		ID      string `json:"id"`
		UserID  string `json:"userId"`
		IsBot   bool   `json:"isBot"`
		Payload struct {
			Text string `json:"text"`
		} `json:"payload"`
	} `json:"data"`
}

// Stream is an open listen stream; Signals is closed when it ends.
type Stream struct {
	Signals <-chan Signal
	cancel  context.CancelFunc
}

// Close ends the stream.
func (s *Stream) Close() { s.cancel() }

// Listen opens the conversation's event stream as the user and returns once
// the server answered with its headers. Pings are skipped.
func (c *Client) Listen(ctx context.Context, chatURL string, u ChatUser, conv string) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, chatURL+"/conversations/"+url.PathEscape(conv)+"/listen", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("x-user-key", u.Key)
	req.Header.Set("Accept", "text/event-stream")
	// The stream outlives the client's request timeout.
	resp, err := (&http.Client{Transport: c.HTTP.Transport}).Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, &StatusError{Method: http.MethodGet, URL: req.URL.String(), Status: resp.StatusCode}
	}
	ch := make(chan Signal, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 2<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "ping" {
				continue
			}
			var s Signal
			if json.Unmarshal([]byte(data), &s) != nil {
				continue
			}
			select {
			case ch <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	return &Stream{Signals: ch, cancel: cancel}, nil
}

// DeleteConversation deletes a conversation the user owns.
func (c *Client) DeleteConversation(ctx context.Context, chatURL string, u ChatUser, conv string) error {
	return c.Chat(ctx, http.MethodDelete, chatURL, "/conversations/"+url.PathEscape(conv), u.Key, map[string]any{}, nil)
}

// GetFile reads one file of the bot.
func (c *Client) GetFile(ctx context.Context, botID, id string) (File, error) {
	var out struct {
		File File `json:"file"`
	}
	err := c.Files(ctx, http.MethodGet, "/v1/files/"+url.PathEscape(id), botID, nil, &out)
	return out.File, err
}
