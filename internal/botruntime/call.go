package botruntime

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Caps on what one invocation may produce.
const (
	maxLogLines     = 100
	maxLogLine      = 4096
	maxOutgoing     = 100
	maxPayloadBytes = 1 << 20
)

// call is one invocation of bot code: an event being handled, or an action
// called through the API. Ids of what it creates are derived from seed, so
// that handling a redelivered event again creates nothing twice.
type call struct {
	ctx  context.Context
	r    *Runtime
	bot  *dispatch.Bot
	seed string
	base time.Time // the time of the event: ids derived from seed carry it
	seq  int
	// last is the creation time, in whole milliseconds (as clients see
	// it), of the newest thing in the conversation the call knows of;
	// replies are dated at least a millisecond after it.
	last     time.Time
	userFID  string
	reserved map[string]bool
	sent     int
	fetches  int // fetch calls this run
	logs     []platform.LogEntry
	dropped  int
	logConv  string
	logUser  string
	// conv is the event's conversation as the event was loaded (message
	// and custom events), which the code's writes to it go to without
	// reading it again: a conversation deleted since fails the write as
	// missing all the same.
	conv *platform.Conversation
}

func (r *Runtime) newCall(ctx context.Context, b *dispatch.Bot, seed string, after time.Time) *call {
	return &call{ctx: ctx, r: r, bot: b, seed: seed, base: after, last: after.Truncate(time.Millisecond), reserved: map[string]bool{}}
}

// nextID derives the call's next id: a ULID whose time is the seed's event
// time and whose random part is a hash of the seed and a counter.
func (c *call) nextID(prefix string) string {
	c.seq++
	h := sha256.Sum256([]byte(c.seed + "/" + strconv.Itoa(c.seq)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(c.base))
	copy(id[6:], h[:10])
	return prefix + toLower(id.String())
}

func toLower(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}

// after is the earliest date of the next thing the call creates: a
// millisecond after the newest thing of the conversation it knows of.
func (c *call) after() time.Time { return c.last.Add(time.Millisecond) }

// do runs a server function for the VM: JSON in, JSON out; errors travel
// as {"__error": {type, message}} and are thrown as Error in the VM.
func (c *call) do(name, in string) string {
	var out any
	var err error = platform.Invalid("", "unknown server function %q", name)
	if f := serverFuncs[name]; f != nil {
		out, err = f(c, []byte(in))
	}
	if err == nil {
		b, merr := json.Marshal(out)
		if merr == nil {
			return string(b)
		}
		err = merr
	}
	e, ok := platform.AsError(err)
	if !ok {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			e = platform.Errorf(platform.TypeOperationTimeout, "the invocation's deadline passed")
		} else {
			c.r.log.Error("bot runtime: server function failed", "bot", c.bot.ID, "err", err)
			e = platform.Errorf(platform.TypeInternal, "internal error")
		}
	}
	b, _ := json.Marshal(map[string]any{"__error": map[string]string{"type": string(e.Type), "message": e.Message}})
	return string(b)
}

func (c *call) log(level, line string) {
	if len(c.logs) >= maxLogLines {
		c.dropped++
		return
	}
	c.logs = append(c.logs, platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: c.bot.ID, Timestamp: c.r.clock.Now(),
		Level: level, Message: cutLine(line), UserID: c.logUser, ConversationID: c.logConv})
}

// cutLine cuts a log line to maxLogLine bytes, on a character boundary.
func cutLine(line string) string {
	if len(line) <= maxLogLine {
		return line
	}
	cut := maxLogLine
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + " … (truncated)"
}

// finish closes the call's log: what was dropped and, when it failed, why.
func (c *call) finish(what string, err error) []platform.LogEntry {
	if c.dropped > 0 {
		c.logs = append(c.logs, platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: c.bot.ID, Timestamp: c.r.clock.Now(),
			Level: "warn", Message: fmt.Sprintf("%d more log lines dropped: at most %d per invocation", c.dropped, maxLogLines), UserID: c.logUser, ConversationID: c.logConv})
	}
	if err != nil {
		c.logs = append(c.logs, platform.LogEntry{ID: platform.NewID(platform.PrefixLog), BotID: c.bot.ID, Timestamp: c.r.clock.Now(),
			Level: "error", Message: what + " failed: " + err.Error(), UserID: c.logUser, ConversationID: c.logConv})
	}
	return c.logs
}

// idArg reads the {id} argument of the get functions.
func idArg(in []byte) (string, error) {
	var a struct {
		ID string `json:"id"`
	}
	if err := decodeArgs(in, &a); err != nil {
		return "", err
	}
	if a.ID == "" {
		return "", platform.Invalid("id", "is required")
	}
	return a.ID, nil
}

func decodeArgs(in []byte, dst any) error {
	if err := platform.CheckJSON(in, "args"); err != nil {
		return err
	}
	if err := json.Unmarshal(in, dst); err != nil {
		return platform.Invalid("", "invalid arguments: %v", err)
	}
	return nil
}

// writeTarget is the conversation a message or event of the code goes to:
// the event's own without a read, else as conversation finds it.
func (c *call) writeTarget(id string) (platform.Conversation, error) {
	if c.conv != nil && id != "" && id == c.conv.FID {
		return *c.conv, nil
	}
	return c.conversation("conversationId", id)
}

// conversation loads a conversation of the bot by id (foreign or internal).
func (c *call) conversation(field, id string) (platform.Conversation, error) {
	if id == "" {
		return platform.Conversation{}, platform.Invalid(field, "is required")
	}
	conv, err := c.r.store.GetConversation(c.ctx, c.bot.ID, id)
	if errors.Is(err, platform.ErrNotFound) {
		return conv, platform.NotFound("conversation", id)
	}
	return conv, err
}

// checkSend applies the caps on what one invocation sends: the payload's
// size (and, for events, that it is an object) and the number of sends.
func (c *call) checkSend(payload json.RawMessage, object bool) error {
	if object && (len(payload) == 0 || payload[0] != '{') {
		return platform.Invalid("payload", "must be an object")
	}
	if len(payload) > maxPayloadBytes {
		return platform.Errorf(platform.TypePayloadTooLarge, "payload: %d bytes; at most %d", len(payload), maxPayloadBytes)
	}
	if c.sent >= maxOutgoing {
		return platform.Errorf(platform.TypeLimitExceeded, "at most %d messages and events per invocation", maxOutgoing)
	}
	return nil
}

type messageArgs struct {
	chat.MessageInput
	EventID string `json:"__eventId"`
}

// outgoingEvent reserves the id of a message the code is about to send and
// returns its event (direction outgoing) for the beforeOutgoingMessage hooks.
func (c *call) outgoingEvent(in []byte) (any, error) {
	var a messageArgs
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	id := c.nextID("msg_")
	c.reserved[id] = true
	ev := map[string]any{
		"botId": c.bot.ID, "createdOn": platform.FormatTime(c.r.clock.Now()), "direction": "outgoing",
		"id": id, "integration": "chat", "messageId": id, "payload": rawOr(a.Payload, `{}`), "preview": Preview(a.Payload),
		"tags": emptyTags(), "type": "message",
	}
	if a.ConversationID != "" {
		ev["conversationId"] = a.ConversationID
	}
	if c.userFID != "" {
		ev["userId"] = c.userFID
	}
	return ev, nil
}

func (c *call) createMessage(in []byte) (any, error) {
	var a messageArgs
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	switch {
	case a.EventID == "":
		// No beforeOutgoingMessage hook ran: the message takes the id
		// outgoingEvent would have reserved for it.
		a.EventID = c.nextID("msg_")
	case !c.reserved[a.EventID]:
		return nil, platform.Invalid("", "createMessage: unknown outgoing message")
	default:
		delete(c.reserved, a.EventID)
	}
	msg, err := chat.CheckMessage(a.MessageInput)
	if err != nil {
		return nil, err
	}
	if err := c.checkSend(msg.Payload, false); err != nil {
		return nil, err
	}
	conv, err := c.writeTarget(msg.ConversationID)
	if err != nil {
		return nil, err
	}
	c.sent++
	m, err := c.r.chat.BotMessage(c.ctx, conv, a.EventID, msg.Payload, msg.Metadata, c.after())
	if err != nil {
		return nil, err
	}
	c.last = m.CreatedAt.Truncate(time.Millisecond)
	if out := c.r.cfg.Outbound; out != nil && conv.Integration != "" && !platform.ServesChatAPI(conv.Integration) {
		bu, err := c.r.chat.BotUser(c.ctx, conv.BotID)
		if err == nil {
			err = out.SendOut(c.ctx, conv, bu, m)
		}
		if err != nil {
			return nil, err
		}
	}
	return map[string]any{"message": chat.MessageJSON(m)}, nil
}

func (c *call) createEvent(in []byte) (any, error) {
	var a struct {
		ConversationID string          `json:"conversationId"`
		Payload        json.RawMessage `json:"payload"`
	}
	if err := decodeArgs(in, &a); err != nil {
		return nil, err
	}
	if err := c.checkSend(a.Payload, true); err != nil {
		return nil, err
	}
	conv, err := c.writeTarget(a.ConversationID)
	if err != nil {
		return nil, err
	}
	c.sent++
	e, err := c.r.chat.BotEvent(c.ctx, conv, c.nextID("evt_"), a.Payload, c.after())
	if err != nil {
		return nil, err
	}
	c.last = e.CreatedAt.Truncate(time.Millisecond)
	return map[string]any{"event": chat.EventJSON(e)}, nil
}

func (c *call) getConversation(in []byte) (any, error) {
	id, err := idArg(in)
	if err != nil {
		return nil, err
	}
	conv, err := c.conversation("id", id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"conversation": chat.ConversationJSON(conv)}, nil
}

func (c *call) getUser(in []byte) (any, error) {
	id, err := idArg(in)
	if err != nil {
		return nil, err
	}
	u, err := c.r.store.GetChatUser(c.ctx, c.bot.ID, id)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("user", id)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"user": chat.UserJSON(u)}, nil
}

func (c *call) getMessage(in []byte) (any, error) {
	id, err := idArg(in)
	if err != nil {
		return nil, err
	}
	m, err := c.r.store.GetMessage(c.ctx, id)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("message", id)
	}
	if err != nil {
		return nil, err
	}
	conv, err := c.r.store.GetConversationByID(c.ctx, m.ConversationID)
	if err != nil || conv.BotID != c.bot.ID {
		return nil, platform.NotFound("message", id)
	}
	return map[string]any{"message": chat.MessageJSON(c.r.chat.Views(c.ctx, conv, []platform.Message{m})[0])}, nil
}

// listPage reads the arguments of a conversation's list method
// ({conversationId, nextToken}): the conversation and the page asked for.
func (c *call) listPage(in []byte) (platform.Conversation, store.Page, error) {
	var a struct {
		ConversationID string `json:"conversationId"`
		NextToken      string `json:"nextToken"`
	}
	if err := decodeArgs(in, &a); err != nil {
		return platform.Conversation{}, store.Page{}, err
	}
	conv, err := c.conversation("conversationId", a.ConversationID)
	return conv, store.Page{Token: a.NextToken, Limit: 20}, err
}

func (c *call) listMessages(in []byte) (any, error) {
	conv, page, err := c.listPage(in)
	if err != nil {
		return nil, err
	}
	ms, next, err := c.r.store.ListMessages(c.ctx, conv.ID, page)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, v := range c.r.chat.Views(c.ctx, conv, ms) {
		out = append(out, chat.MessageJSON(v))
	}
	return map[string]any{"messages": out, "meta": meta(next)}, nil
}

func (c *call) listParticipants(in []byte) (any, error) {
	conv, page, err := c.listPage(in)
	if err != nil {
		return nil, err
	}
	us, next, err := c.r.store.ListParticipants(c.ctx, conv.ID, page)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, u := range us {
		out = append(out, chat.UserJSON(u))
	}
	return map[string]any{"participants": out, "meta": meta(next)}, nil
}

func meta(next string) map[string]any {
	if next == "" {
		return map[string]any{}
	}
	return map[string]any{"nextToken": next}
}

func rawOr(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage(def)
	}
	return v
}

func emptyTags() map[string]any {
	return map[string]any{"conversation": map[string]string{}, "message": map[string]string{}, "user": map[string]string{}}
}
