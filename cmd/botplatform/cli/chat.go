package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

func chatFlags(fs *flag.FlagSet, e *env) {
	fs.DurationVar(&e.opts.timeout, "timeout", 30*time.Second, "when the input is not a terminal: how long to wait for the bot's reply to each line")
}

// chatMessage is a message_created signal's data.
type chatMessage struct {
	ID      string          `json:"id"`
	IsBot   bool            `json:"isBot"`
	Payload json.RawMessage `json:"payload"`
}

// chat talks to a bot through its Chat API as a new user, in a new
// conversation: each line typed is a message, each bot message is printed
// as it streams in. On a terminal the line being typed stays put while
// replies appear above it; from a pipe, each line waits for the bot's
// reply before the next is sent, so a script reads question and answer
// in order.
func chat(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	base := b.chatURL()
	if base == "" {
		return fmt.Errorf("bot %s has no Chat API address", b.Name)
	}
	var user struct {
		Key string `json:"key"`
	}
	if err := e.cl.do(ctx, call{method: "POST", path: base + "/users", anonymous: true, body: struct{}{}, out: &user}); err != nil {
		return err
	}
	var conv struct {
		Conversation struct {
			ID string `json:"id"`
		} `json:"conversation"`
	}
	if err := e.cl.do(ctx, call{method: "POST", path: base + "/conversations", userKey: user.Key, body: struct{}{}, out: &conv}); err != nil {
		return err
	}
	convID := conv.Conversation.ID
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The stream is open (the server listens) before the first message
	// goes out, so no reply can be missed.
	stream, err := e.cl.send(ctx, call{method: "GET", path: base + "/conversations/" + convID + "/listen", userKey: user.Key, accept: "text/event-stream"})
	if err != nil {
		return err
	}
	defer stream.Body.Close()
	replies := make(chan chatMessage, 64)
	streamErr := make(chan error, 1)
	go func() { streamErr <- readSignals(stream.Body, replies) }()

	send := func(text string) error {
		body := map[string]any{"conversationId": convID, "payload": map[string]any{"type": "text", "text": text}}
		return e.cl.do(ctx, call{method: "POST", path: base + "/messages", userKey: user.Key, body: body})
	}
	why := silence{e: e, bot: b, conv: convID, since: time.Now().Add(-time.Minute)}
	if f, ok := e.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) && isTerminal(e.Out) {
		return chatTerminal(ctx, e, f, b.Name, convID, send, replies, streamErr, why)
	}
	if hint := why.noCode(ctx); hint != "" {
		fmt.Fprintln(e.Err, "note:", hint)
	}
	return chatScript(ctx, e, send, replies, streamErr, why)
}

// silence tells why a bot may not answer in a chat's conversation.
type silence struct {
	e     *env
	bot   bot
	conv  string
	since time.Time // before the conversation began
}

// noCode says that the bot answers nothing, having neither code nor a
// url; "" otherwise (or when the bot cannot be read).
func (s silence) noCode(ctx context.Context) string {
	var resp struct{ Bot bot }
	if err := s.e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(s.bot.ID), out: &resp}); err != nil {
		return ""
	}
	if resp.Bot.DeployedAt != "" || resp.Bot.URL != "" || resp.Bot.Dev {
		return "" // (a viewer is not shown a bot's url; a dev bot has one)
	}
	return fmt.Sprintf("bot %s has no code, so it answers nothing: deploy some with `botplatform bots deploy %s FILE.js` (docs/bot-code.md)", s.bot.Name, s.bot.ID)
}

// errors counts the bot's errors in the conversation, from its logs, and
// says the last one ("" when there is none).
func (s silence) errors(ctx context.Context) (int, string) {
	var resp struct {
		Logs []struct {
			Message string `json:"message"`
		} `json:"logs"`
	}
	q := url.Values{"timeStart": {s.since.UTC().Format(time.RFC3339Nano)}, "conversationId": {s.conv}, "level": {"error"}}
	if err := s.e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(s.bot.ID) + "/logs?" + q.Encode(), out: &resp}); err != nil || len(resp.Logs) == 0 {
		return 0, ""
	}
	return len(resp.Logs), "the bot failed: " + resp.Logs[len(resp.Logs)-1].Message
}

// why is what tells why no reply came: no code, the bot's last error, or
// where to look.
func (s silence) why(ctx context.Context) string {
	if hint := s.noCode(ctx); hint != "" {
		return hint
	}
	if _, hint := s.errors(ctx); hint != "" {
		return hint
	}
	return fmt.Sprintf("`botplatform bots logs %s -f` shows what the bot does", s.bot.ID)
}

// chatTerminal is the interactive chat: a line editor in raw mode, with
// the bot's messages written above the line being typed.
func chatTerminal(ctx context.Context, e *env, in *os.File, name, convID string, send func(string) error, replies <-chan chatMessage, streamErr <-chan error, why silence) error {
	fd := int(in.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return err
	}
	defer term.Restore(fd, old)
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, e.Out}, "you> ")
	fmt.Fprintf(t, "Chatting with %s (conversation %s). Ctrl-D or Ctrl-C ends.\n", name, convID)
	if hint := why.noCode(ctx); hint != "" {
		fmt.Fprintf(t, "note: %s\n", hint)
	}
	lost := make(chan error, 1)
	var answered atomic.Int64 // the bot's messages so far
	go func() {
		for {
			select {
			case m := <-replies:
				answered.Add(1)
				fmt.Fprintf(t, "%s: %s\n", name, payloadText(m.Payload))
			case err := <-streamErr:
				fmt.Fprintf(t, "the conversation's stream ended: %v\n", err)
				lost <- err
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		line, err := t.ReadLine()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case err := <-lost:
			return fmt.Errorf("the conversation's stream ended: %v", err)
		default:
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := send(line); err != nil {
			fmt.Fprintf(t, "not sent: %v\n", err)
			continue
		}
		// A line the bot leaves unanswered for a while gets a word on why.
		before := answered.Load()
		time.AfterFunc(terminalHintAfter, func() {
			if answered.Load() == before && ctx.Err() == nil {
				fmt.Fprintf(t, "(no reply after %s: %s)\n", terminalHintAfter, why.why(ctx))
			}
		})
	}
}

// terminalHintAfter is how long the interactive chat waits for a reply
// before it says why none may come.
const terminalHintAfter = 5 * time.Second

// chatScript reads lines from a pipe or a file: each is sent, then the
// bot's first reply is awaited and printed (later ones as they come).
func chatScript(ctx context.Context, e *env, send func(string) error, replies <-chan chatMessage, streamErr <-chan error, why silence) error {
	print := func(m chatMessage) error {
		if e.json {
			return e.printJSON(m)
		}
		_, err := fmt.Fprintln(e.Out, payloadText(m.Payload))
		return err
	}
	sc := bufio.NewScanner(e.In)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		seen, _ := why.errors(ctx) // the errors of earlier lines
		if err := send(line); err != nil {
			return err
		}
		timer := time.NewTimer(e.opts.timeout)
		// The bot's logs are looked at while waiting: an error there ends
		// the wait with it.
		look := time.NewTicker(scriptLogsEvery)
	wait:
		for {
			select {
			case m := <-replies:
				timer.Stop()
				look.Stop()
				if err := print(m); err != nil {
					return err
				}
				break wait
			case <-look.C:
				if n, hint := why.errors(ctx); n > seen {
					look.Stop()
					return fmt.Errorf("no reply to %q: %s", line, hint)
				}
			case err := <-streamErr:
				return fmt.Errorf("the conversation's stream ended: %v", err)
			case <-timer.C:
				look.Stop()
				return fmt.Errorf("no reply from the bot within %s to %q: %s", e.opts.timeout, line, why.why(ctx))
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return sc.Err()
}

// scriptLogsEvery is how often a script's chat reads the bot's errors
// while it waits for a reply.
const scriptLogsEvery = 2 * time.Second

// readSignals reads the listen stream's signals (one JSON per SSE data
// field) until it ends, passing on the bot's new messages.
func readSignals(r io.Reader, out chan<- chatMessage) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(d, " "))
			continue
		}
		if line != "" || data.Len() == 0 {
			continue // another field, or a comment
		}
		var sig struct {
			Type string      `json:"type"`
			Data chatMessage `json:"data"`
		}
		if json.Unmarshal([]byte(data.String()), &sig) == nil && sig.Type == "message_created" && sig.Data.IsBot {
			out <- sig.Data
		}
		data.Reset()
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}

// payloadText renders a message payload on one line: its text where it
// has one, else its type and content.
func payloadText(raw json.RawMessage) string {
	var p map[string]any
	if json.Unmarshal(raw, &p) != nil {
		return string(raw)
	}
	typ, _ := p["type"].(string)
	for _, k := range []string{"text", "markdown"} {
		if s, ok := p[k].(string); ok {
			if opts, ok := p["options"].([]any); ok {
				var labels []string
				for _, o := range opts {
					if m, ok := o.(map[string]any); ok {
						labels = append(labels, fmt.Sprint(m["label"]))
					}
				}
				s += " [" + strings.Join(labels, " | ") + "]"
			}
			return s
		}
	}
	delete(p, "type")
	rest, _ := json.Marshal(p)
	return "[" + typ + "] " + string(rest)
}
