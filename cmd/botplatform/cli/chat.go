package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
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
	if f, ok := e.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) && isTerminal(e.Out) {
		return chatTerminal(ctx, e, f, b.Name, convID, send, replies, streamErr)
	}
	return chatScript(ctx, e, send, replies, streamErr)
}

// chatTerminal is the interactive chat: a line editor in raw mode, with
// the bot's messages written above the line being typed.
func chatTerminal(ctx context.Context, e *env, in *os.File, name, convID string, send func(string) error, replies <-chan chatMessage, streamErr <-chan error) error {
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
	lost := make(chan error, 1)
	go func() {
		for {
			select {
			case m := <-replies:
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
		}
	}
}

// chatScript reads lines from a pipe or a file: each is sent, then the
// bot's first reply is awaited and printed (later ones as they come).
func chatScript(ctx context.Context, e *env, send func(string) error, replies <-chan chatMessage, streamErr <-chan error) error {
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
		if err := send(line); err != nil {
			return err
		}
		timer := time.NewTimer(e.opts.timeout)
		select {
		case m := <-replies:
			timer.Stop()
			if err := print(m); err != nil {
				return err
			}
		case err := <-streamErr:
			return fmt.Errorf("the conversation's stream ended: %v", err)
		case <-timer.C:
			return fmt.Errorf("no reply from the bot within %s to %q", e.opts.timeout, line)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return sc.Err()
}

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
