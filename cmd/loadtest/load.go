package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
)

// op is one kind of operation and its share of the load.
type op struct {
	name   string
	weight int
	run    func(l *load, ctx context.Context, rng *mrand.Rand) error
}

// ops is the mix. An operation made of several requests records each
// request's latency under its own name too (see load.time).
var ops = []op{
	{"admin.listBots", 10, func(l *load, ctx context.Context, _ *mrand.Rand) error { _, err := l.c.ListBots(ctx); return err }},
	{"files.write", 15, (*load).writeFile},
	{"files.read", 15, (*load).readFile},
	{"files.list", 8, func(l *load, ctx context.Context, _ *mrand.Rand) error {
		return l.c.Files(ctx, "GET", "/v1/files?pageSize=20", l.bot.ID, nil, nil)
	}},
	{"files.search", 10, func(l *load, ctx context.Context, rng *mrand.Rand) error {
		_, err := l.c.SearchFiles(ctx, l.bot.ID, harness.Words[rng.IntN(len(harness.Words))]+" "+harness.Words[rng.IntN(len(harness.Words))])
		return err
	}},
	{"chat.roundTrip", 25, (*load).chatRoundTrip},
	{"chat.listMessages", 10, func(l *load, ctx context.Context, rng *mrand.Rand) error {
		u := l.users[rng.IntN(len(l.users))]
		conv := u.conversation()
		_, err := l.c.ListMessages(ctx, l.bot.ChatURL, u.user, conv, 1)
		return rotated(err)
	}},
	{"chat.listen", 7, func(l *load, ctx context.Context, rng *mrand.Rand) error {
		u := l.users[rng.IntN(len(l.users))]
		conv := u.conversation()
		st, err := l.c.Listen(ctx, l.bot.ChatURL, u.user, conv)
		if err == nil {
			st.Close()
		}
		return rotated(err)
	}},
}

// load is the running load and what it measured.
type load struct {
	o     options
	c     *harness.Client
	bot   harness.Bot
	users []*user
	keys  []string

	mu      sync.Mutex
	lat     map[string][]time.Duration
	errs    map[string]int
	samples map[string]string // first error of each operation
	ready   map[string]string // key -> id of files with content
	writing sync.Map          // keys being written: one writer per key at a time
	skipped atomic.Int64
}

// user is a chat user with its conversation and its open event stream; its
// messages go one at a time: a round trip holds turn from the message to
// its reply.
type user struct {
	turn    sync.Mutex
	mu      sync.Mutex // conv and replies
	user    harness.ChatUser
	conv    string
	stream  *harness.Stream
	sent    int
	stalled bool // a reply went missing: the conversation is kept as it is
	replies map[string]chan struct{}
	ended   chan struct{} // closed when the stream ends
}

func (u *user) conversation() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.conv
}

func newLoad(ctx context.Context, o options, srv *harness.Server, dataDir string) (*load, error) {
	boot, err := harness.ReadBootstrap(dataDir)
	if err != nil {
		return nil, err
	}
	l := &load{o: o, lat: map[string][]time.Duration{}, errs: map[string]int{}, samples: map[string]string{}, ready: map[string]string{},
		c: &harness.Client{URL: srv.URL, Token: boot.Token, WorkspaceID: boot.WorkspaceID, HTTP: harness.NewHTTP(time.Minute)}}
	if l.bot, err = l.c.CreateBot(ctx, "loadtest counter", harness.CounterBotJS); err != nil {
		return nil, err
	}
	for range o.users {
		cu, err := l.c.CreateChatUser(ctx, l.bot.ChatURL)
		if err != nil {
			return nil, err
		}
		u := &user{user: cu}
		if err := l.newConversation(ctx, u); err != nil {
			return nil, err
		}
		l.users = append(l.users, u)
	}
	for i := range 200 {
		l.keys = append(l.keys, fmt.Sprintf("load/file-%03d", i))
	}
	return l, nil
}

// newConversation gives u a fresh conversation (deleting its previous one,
// so that the database stays bounded) and opens its stream.
func (l *load) newConversation(ctx context.Context, u *user) error {
	if u.stream != nil {
		u.stream.Close()
		if err := l.c.DeleteConversation(ctx, l.bot.ChatURL, u.user, u.conv); err != nil {
			return err
		}
	}
	conv, err := l.c.CreateConversation(ctx, l.bot.ChatURL, u.user)
	if err != nil {
		return err
	}
	u.mu.Lock()
	u.conv = conv
	u.mu.Unlock()
	u.sent, u.stream = 0, nil
	return l.openStream(ctx, u)
}

// openStream (re)opens u's stream and routes the bot's replies to the
// messages that wait for them.
func (l *load) openStream(ctx context.Context, u *user) error {
	st, err := l.c.Listen(context.WithoutCancel(ctx), l.bot.ChatURL, u.user, u.conv)
	if err != nil {
		return err
	}
	u.stream = st
	replies := map[string]chan struct{}{}
	ended := make(chan struct{})
	u.mu.Lock()
	u.replies, u.ended = replies, ended
	u.mu.Unlock()
	go func() {
		defer close(ended)
		for s := range st.Signals {
			if s.Type != "message_created" || !s.Data.IsBot {
				continue
			}
			f := strings.Fields(s.Data.Payload.Text)
			if len(f) < 2 {
				continue
			}
			u.mu.Lock()
			ch := replyChan(replies, f[1])
			select {
			case <-ch: // a second reply to one message
			default:
				close(ch)
			}
			u.mu.Unlock()
		}
	}()
	return nil
}

// chatRoundTrip sends a message as a free user and waits for the bot's
// reply on the user's stream. Every 50 messages the user moves to a new
// conversation.
func (l *load) chatRoundTrip(ctx context.Context, rng *mrand.Rand) error {
	start := rng.IntN(len(l.users))
	var u *user
	for i := range l.users {
		if c := l.users[(start+i)%len(l.users)]; c.turn.TryLock() {
			u = c
			break
		}
	}
	if u == nil {
		return errBusy
	}
	defer u.turn.Unlock()
	select {
	case <-u.ended: // the server ended the stream: listen again
		if err := l.time("chat.listen", func() error { return l.openStream(ctx, u) }); err != nil {
			return err
		}
	default:
	}
	if u.sent >= 50 && !u.stalled {
		if err := l.time("chat.rotateConversation", func() error { return l.newConversation(ctx, u) }); err != nil {
			return err
		}
	}
	u.sent++
	var msg harness.Message
	err := l.time("chat.createMessage", func() (err error) {
		msg, err = l.c.SendText(ctx, l.bot.ChatURL, u.user, u.conv, fmt.Sprintf("hello %d", u.sent))
		return err
	})
	if err != nil {
		return err
	}
	// The reply may have come on the stream before createMessage answered
	// (then it is waiting in replies, and chat.reply is about 0). Should the
	// stream miss it, the conversation is looked at every second.
	u.mu.Lock()
	replies := u.replies
	ch := replyChan(replies, msg.ID)
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(replies, msg.ID)
		u.mu.Unlock()
	}()
	began := time.Now()
	for {
		select {
		case <-ch:
			l.record("chat.reply", time.Since(began), nil)
			return nil
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		ms, err := l.c.ListMessages(ctx, l.bot.ChatURL, u.user, u.conv, 1)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if strings.HasPrefix(m.Payload.Text, "re "+msg.ID+" ") {
				l.record("chat.reply", time.Since(began), nil)
				return nil
			}
		}
		if time.Since(began) > 30*time.Second {
			u.stalled = true
			err := fmt.Errorf("no reply to %s in %s within 30s%s", msg.ID, u.conv, l.botErrors(ctx, u.conv, began))
			l.record("chat.reply", time.Since(began), err)
			return err
		}
	}
}

// replyChan returns the channel closed when message id's reply arrives,
// made by whichever comes first: the reply on the stream, or the round trip
// that sent the message. Called with the user's mu held.
func replyChan(replies map[string]chan struct{}, id string) chan struct{} {
	ch, ok := replies[id]
	if !ok {
		ch = make(chan struct{})
		replies[id] = ch
	}
	return ch
}

var errBusy = errors.New("busy")

// rotated treats a 404 as the user's conversation having been replaced
// meanwhile (chat.roundTrip deletes it every 50 messages): not run.
func rotated(err error) error {
	if harness.Status(err) == 404 {
		return errBusy
	}
	return err
}

// botErrors are the bot's error log lines of a conversation since start,
// to explain a missing reply.
func (l *load) botErrors(ctx context.Context, conv string, start time.Time) string {
	logs, err := l.c.BotLogs(ctx, l.bot.ID, start.Add(-time.Minute), "error")
	if err != nil {
		return "; bot logs: " + err.Error()
	}
	var lines []string
	for _, lg := range logs {
		if lg.ConversationID == conv {
			lines = append(lines, lg.Timestamp+" "+lg.Message)
		}
	}
	if len(lines) == 0 {
		return "; no error in the bot's logs"
	}
	return "; bot's error logs: " + strings.Join(lines, " | ")
}

// writeFile upserts a file of the key pool (now and then a Markdown file
// to index) and uploads its content.
func (l *load) writeFile(ctx context.Context, rng *mrand.Rand) error {
	key := l.keys[rng.IntN(len(l.keys))]
	if _, busy := l.writing.LoadOrStore(key, true); busy {
		return errBusy // another upsert of the key would make this upload stale
	}
	defer l.writing.Delete(key)
	index := rng.IntN(5) == 0
	var content []byte
	if index {
		content = harness.Markdown(rng, 2000+rng.IntN(8000))
	} else {
		content = make([]byte, 1+rng.IntN(64<<10))
		_, _ = rand.Read(content)
	}
	body := map[string]any{"key": key, "size": len(content), "index": index}
	if index {
		body["contentType"] = "text/markdown"
	}
	var f harness.File
	if err := l.time("files.upsert", func() (err error) { f, err = l.c.UpsertFile(ctx, l.bot.ID, body); return err }); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.ready, key)
	l.mu.Unlock()
	if err := l.time("files.upload", func() error { return l.c.Upload(ctx, f.UploadURL, content) }); err != nil {
		return err
	}
	l.mu.Lock()
	l.ready[key] = f.ID
	l.mu.Unlock()
	return nil
}

// readFile reads a file that has content, and downloads it.
func (l *load) readFile(ctx context.Context, rng *mrand.Rand) error {
	l.mu.Lock()
	var id string
	n := rng.IntN(len(l.ready) + 1)
	for _, v := range l.ready {
		if id = v; n == 0 {
			break
		}
		n--
	}
	l.mu.Unlock()
	if id == "" {
		return errBusy // nothing uploaded yet
	}
	var f harness.File
	if err := l.time("files.get", func() (err error) { f, err = l.c.GetFile(ctx, l.bot.ID, id); return err }); err != nil {
		if harness.Status(err) == 404 {
			return nil // replaced meanwhile
		}
		return err
	}
	if f.Size == nil {
		return nil // replaced meanwhile, not uploaded yet
	}
	return l.time("files.download", func() error {
		n, _, err := l.c.Download(ctx, f.URL)
		if err == nil && n != *f.Size {
			err = fmt.Errorf("%s: downloaded %d bytes, size %d", f.Key, n, *f.Size)
		}
		if harness.Status(err) == 404 || harness.Status(err) == 403 {
			return nil // replaced between the get and the download
		}
		return err
	})
}

// time runs one request and records its latency under name.
func (l *load) time(name string, f func() error) error {
	began := time.Now()
	err := f()
	l.record(name, time.Since(began), err)
	return err
}

func (l *load) record(name string, d time.Duration, err error) {
	if errors.Is(err, errBusy) {
		return // not run
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lat[name] = append(l.lat[name], d)
	if err != nil {
		l.errs[name]++
		if _, ok := l.samples[name]; !ok {
			l.samples[name] = err.Error()
		}
	}
}

// run starts operations at the set rate for the set duration, each on a
// free slot of the worker pool.
func (l *load) run(ctx context.Context) {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	ctx, cancel := context.WithTimeout(ctx, l.o.duration)
	defer cancel()
	slots := make(chan struct{}, l.o.workers)
	var wg sync.WaitGroup
	rng := mrand.New(mrand.NewPCG(l.o.seed, 0))
	interval := time.Duration(float64(time.Second) / l.o.rate)
	next := time.Now()
	for i := uint64(1); ; i++ {
		next = next.Add(interval)
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-time.After(time.Until(next)):
		}
		pick := rng.IntN(total)
		var o op
		for _, o = range ops {
			if pick -= o.weight; pick < 0 {
				break
			}
		}
		select {
		case slots <- struct{}{}:
		default:
			l.skipped.Add(1)
			continue
		}
		orng := mrand.New(mrand.NewPCG(l.o.seed, i))
		wg.Go(func() {
			defer func() { <-slots }()
			// Requests end on their own: the load's end does not cut them.
			_ = l.time(o.name, func() error { return o.run(l, context.WithoutCancel(ctx), orng) })
		})
	}
}
