package nodehost

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The protocol with host.js: one JSON object per line. Go writes call frames to the wrapper's fd 3; the
// wrapper writes ready, hb (heartbeat, every 500 ms), log, answer and fatal frames to fd 4.

// frameIn is a frame from the wrapper (fd 4). T is ready, hb, log, answer or fatal.
type frameIn struct {
	T              string            `json:"t"`
	ID             uint64            `json:"id"`
	Status         int               `json:"status"`
	Headers        map[string]string `json:"headers"`
	Body           string            `json:"body"`
	Level          string            `json:"level"`
	Msg            string            `json:"msg"`
	OOM            bool              `json:"oom"`
	ConversationID string            `json:"conversationId"`
	UserID         string            `json:"userId"`
	EventID        string            `json:"eventId"`
	MessageID      string            `json:"messageId"`
	WorkflowID     string            `json:"workflowId"`
	// Definition (on ready, with --check) is what the bundle declares.
	Definition *Definition `json:"definition"`
}

// Definition is what a bundle declares that the platform keeps for it: the
// tables of its props (each schema as JSON Schema), which `bp deploy`
// cannot send (@botpress/client's updateBot has no tables).
type Definition struct {
	Tables map[string]json.RawMessage `json:"tables,omitempty"`
}

// callFrame is a frame to the wrapper (fd 3).
type callFrame struct {
	T   string      `json:"t"` // call
	ID  uint64      `json:"id"`
	Req wireRequest `json:"req"`
}

type wireRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body,omitempty"` // the SDK reads a missing body as undefined
}

// wire is the request as the SDK's handler expects it: lower-case header names, one string per header.
func wire(req Request) wireRequest {
	headers := make(map[string]string, len(req.Header))
	for k, vs := range req.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	w := wireRequest{Method: strings.ToUpper(req.Method), Path: req.Path, Query: req.Query, Headers: headers, Body: string(req.Body)}
	if w.Method == "" {
		w.Method = http.MethodGet
	}
	if w.Path == "" {
		w.Path = "/"
	}
	return w
}

func (f frameIn) response() (Response, error) {
	if f.Status < 100 || f.Status > 599 {
		return Response{}, fmt.Errorf("the bot answered with the invalid status %d", f.Status)
	}
	h := make(http.Header, len(f.Headers))
	for k, v := range f.Headers {
		h.Set(k, v)
	}
	return Response{Status: f.Status, Header: h, Body: []byte(f.Body)}, nil
}

func (p *proc) frame(b []byte) {
	var f frameIn
	if err := json.Unmarshal(b, &f); err != nil {
		return // a frame cut at maxFrame
	}
	p.mu.Lock()
	p.lastFrame = time.Now()
	var answer chan frameIn
	switch f.T {
	case "answer":
		ch, ok := p.pending[f.ID]
		if ok {
			delete(p.pending, f.ID)
			if ch == nil {
				p.overdue--
			}
		}
		answer = ch
	case "fatal":
		p.fatal = f.Msg
		p.oom = p.oom || f.OOM
	}
	p.mu.Unlock()
	switch f.T {
	case "answer":
		if answer != nil {
			answer <- f
		}
	case "ready":
		p.definition = f.Definition
		p.readyOnce.Do(func() { close(p.ready) })
	case "log":
		p.emit(Line{
			Level: level(f.Level), Message: f.Msg, ConversationID: f.ConversationID, UserID: f.UserID,
			EventID: f.EventID, MessageID: f.MessageID, WorkflowID: f.WorkflowID,
		})
	}
}

// rawLine handles what bundle code (or node itself) wrote to stdout or stderr directly.
func (p *proc) rawLine(lvl string) func([]byte) {
	return func(b []byte) {
		msg := string(b)
		if lvl == "error" {
			p.mu.Lock()
			p.stderr.add(msg)
			p.mu.Unlock()
		}
		if msg != "" {
			p.emit(Line{Level: lvl, Message: msg})
		}
	}
}

func (p *proc) emit(l Line) {
	if p.lines == nil {
		return
	}
	l.BotID, l.Integration, l.Version, l.At = p.botID, p.integration, p.version, time.Now()
	p.lines(l)
}

func level(s string) string {
	switch s {
	case "debug", "warn", "error":
		return s
	}
	return "info"
}
