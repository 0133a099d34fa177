package main

// Helpers of the Chat API end-to-end tests: a server started with extra
// flags, a bot per scenario, user keys, and a Server-Sent Events reader.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/golang-jwt/jwt/v5"
)

// signalTimeout bounds every wait for something the server must send: a
// hang guard, generous for a machine that runs the whole suite on two
// cores (a wait ends as soon as what it waits for comes).
const signalTimeout = 180 * time.Second

// stopTimeout bounds a test server's shutdown (a hang guard, as
// signalTimeout).
const stopTimeout = 90 * time.Second

// chatEnv is one bot's Chat API: its own workspace and bot.
type chatEnv struct {
	t         *testing.T
	s         *testServer
	admin     client // the bot's workspace owner
	botID     string
	webhookID string
	base      string // the path of the bot's webhookUrl: /chat/{webhookId}
	encKey    string // bot.integrations.chat.configuration.encryptionKey
	db        *chatDB
}

// chatDB is the server's database opened by the test, shared by the copies
// of one chatEnv.
type chatDB struct {
	owner *testing.T // the test that closes it
	once  sync.Once
	st    *sqlstore.Store
}

func newChatEnv(t *testing.T, s *testServer) *chatEnv {
	t.Helper()
	adm := s.newWorkspace(t, "chat "+t.Name())
	return chatEnvOf(t, s, adm, adm.createBot(map[string]any{"name": "chat bot"}))
}

// chatEnvOf is the Chat API of a bot adm created (the bot object of the
// createBot response).
func chatEnvOf(t *testing.T, s *testServer, adm client, bot map[string]any) *chatEnv {
	t.Helper()
	e := &chatEnv{t: t, s: s, admin: adm, botID: str(t, bot, "id"), db: &chatDB{owner: t}}
	e.webhookID = str(t, bot, "integrations", "chat", "webhookId")
	url := str(t, bot, "integrations", "chat", "webhookUrl")
	if !strings.HasPrefix(url, s.URL+"/") {
		t.Fatalf("webhookUrl %q is not on the server %s", url, s.URL)
	}
	e.base = strings.TrimPrefix(url, s.URL)
	e.encKey = str(t, bot, "integrations", "chat", "configuration", "encryptionKey")
	return e
}

// call sends a Chat API request with the user key (none when empty). A
// DELETE without a body sends {} as the official client does.
func (e *chatEnv) call(method, path, key string, body any) *response {
	e.t.Helper()
	var hdr []string
	if key != "" {
		hdr = append(hdr, "x-user-key", key)
	}
	if method == http.MethodDelete && body == nil {
		body = "{}"
	}
	return e.s.as(e.t, "", "").raw(method, e.base+path, body, hdr...)
}

// status requires that status and returns the JSON object of the body.
func (r *response) status(code int) map[string]any {
	r.t.Helper()
	if r.Status != code {
		r.t.Fatalf("%s: status %d, want %d; body: %s", r.what, r.Status, code, tail(string(r.Body), 2000))
	}
	return r.object()
}

// chatUser is a user as the tests know it: its id as clients see it, its
// key and the last user object the server returned.
type chatUser struct {
	ID  string
	Key string
	Obj map[string]any
}

// createUser calls createUser with body (nil: {}) and checks the key.
func (e *chatEnv) createUser(body map[string]any) chatUser {
	e.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	r := e.call(http.MethodPost, "/users", "", body).status(201)
	u := field(e.t, r, "user").(map[string]any)
	key := str(e.t, r, "key")
	id := str(e.t, u, "id")
	if claim := e.keyClaim(key, e.encKey); claim != id {
		e.t.Fatalf("createUser: key names %q, want the user id %q", claim, id)
	}
	return chatUser{ID: id, Key: key, Obj: u}
}

// user creates a user with that foreign id.
func (e *chatEnv) user(fid string) chatUser {
	e.t.Helper()
	return e.createUser(map[string]any{"id": fid})
}

// keyClaim verifies a user key with secret (HS256 only) and returns its id
// claim.
func (e *chatEnv) keyClaim(key, secret string) string {
	e.t.Helper()
	tok, err := jwt.Parse(key, func(*jwt.Token) (any, error) { return []byte(secret), nil }, jwt.WithValidMethods([]string{"HS256"}))
	if err != nil {
		e.t.Fatalf("user key %q does not verify as an HS256 JWT with the bot's encryption key: %v", key, err)
	}
	if typ, _ := tok.Header["typ"].(string); typ != "JWT" {
		e.t.Errorf("user key header typ %v, want JWT", tok.Header["typ"])
	}
	id, _ := tok.Claims.(jwt.MapClaims)["id"].(string)
	return id
}

// signKey signs claims as an app holding the encryption key does.
func signKey(t *testing.T, method jwt.SigningMethod, secret string, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatalf("sign a key: %v", err)
	}
	return s
}

// selfKey is Client.connect({userId, encryptionKey})'s key: {id, iat}.
func (e *chatEnv) selfKey(id string) string {
	e.t.Helper()
	return signKey(e.t, jwt.SigningMethodHS256, e.encKey, jwt.MapClaims{"id": id, "iat": time.Now().Unix()})
}

// conversation creates a conversation (fid "": none given) owned by u.
func (e *chatEnv) conversation(u chatUser, fid string) string {
	e.t.Helper()
	body := map[string]any{}
	if fid != "" {
		body["id"] = fid
	}
	c := e.call(http.MethodPost, "/conversations", u.Key, body).status(201)
	id := str(e.t, c, "conversation", "id")
	if fid != "" && id != fid {
		e.t.Fatalf("createConversation with id %q returned id %q", fid, id)
	}
	return id
}

// addParticipant has the owner add p to the conversation.
func (e *chatEnv) addParticipant(owner chatUser, conv string, p chatUser) {
	e.t.Helper()
	r := e.call(http.MethodPost, "/conversations/"+conv+"/participants", owner.Key, map[string]any{"userId": p.ID}).ok()
	if got := str(e.t, r, "participant", "id"); got != p.ID {
		e.t.Fatalf("addParticipant returned participant %q, want %q", got, p.ID)
	}
}

// send posts a text message and returns the message object.
func (e *chatEnv) send(u chatUser, conv, text string) map[string]any {
	e.t.Helper()
	r := e.call(http.MethodPost, "/messages", u.Key, map[string]any{
		"conversationId": conv, "payload": map[string]any{"type": "text", "text": text},
	}).status(201)
	return field(e.t, r, "message").(map[string]any)
}

// store opens the server's database (once per env), as an operator would.
func (e *chatEnv) store() *sqlstore.Store {
	e.t.Helper()
	var openErr error
	e.db.once.Do(func() {
		st, err := openStore(context.Background(), config.Config{DataDir: e.s.DataDir, DatabaseURL: e.s.DatabaseURL})
		if err != nil {
			openErr = err
			return
		}
		e.db.st = st
		e.db.owner.Cleanup(func() { st.Close() })
	})
	if e.db.st == nil {
		e.t.Fatalf("the server's store could not be opened: %v", openErr)
	}
	return e.db.st
}

// internalUser and internalConv map a client-visible id to the internal id.
func (e *chatEnv) internalUser(id string) string {
	e.t.Helper()
	u, err := e.store().GetChatUser(context.Background(), e.botID, id)
	if err != nil {
		e.t.Fatalf("GetChatUser %s: %v", id, err)
	}
	return u.ID
}

func (e *chatEnv) internalConv(id string) string {
	e.t.Helper()
	c, err := e.store().GetConversation(context.Background(), e.botID, id)
	if err != nil {
		e.t.Fatalf("GetConversation %s: %v", id, err)
	}
	return c.ID
}

// ---- Server-Sent Events ----

// sseEvent is one event of a stream: its lines (without the blank line that
// ends it), its event type and its data.
type sseEvent struct {
	Lines []string
	Event string
	Data  string
}

// sseStream reads a listenConversation stream in the background.
type sseStream struct {
	what   string
	Header http.Header
	events chan sseEvent
	ended  chan struct{} // closed when the response body ends
	cancel context.CancelFunc
}

var sseClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// listenTo opens the conversation's stream as u, as the Node client does,
// and requires a 200 text/event-stream answer.
func (e *chatEnv) listenTo(u chatUser, conv string) *sseStream {
	e.t.Helper()
	return e.listenPath(u.Key, "/conversations/"+conv+"/listen")
}

func (e *chatEnv) listenPath(key, path string) *sseStream {
	e.t.Helper()
	st, refused := e.tryListen(key, path)
	if refused != nil {
		e.t.Fatalf("GET %s: status %d, want 200; body: %s", path, refused.Status, tail(string(refused.Body), 2000))
	}
	return st
}

// tryListen opens the stream at path; when the server refuses, it returns
// its answer instead.
func (e *chatEnv) tryListen(key, path string) (*sseStream, *response) {
	e.t.Helper()
	return e.openStream(e.base+path, "x-user-key", key)
}

// openStream opens the event stream at path (on the server) with the
// headers hdr (name, value, …).
func (e *chatEnv) openStream(path string, hdr ...string) (*sseStream, *response) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.s.URL+path, nil)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := sseClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("GET %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		cancel()
		if err != nil {
			e.t.Fatalf("GET %s: reading the error: %v", path, err)
		}
		return nil, &response{t: e.t, what: "GET " + path, Status: res.StatusCode, Header: res.Header, Body: b}
	}
	if res.Header.Get("x-request-id") == "" {
		e.t.Errorf("GET %s: the stream has no x-request-id header", path)
	}
	if ct := res.Header.Get("Content-Type"); !regexp.MustCompile(`^text/event-stream(;.*)?$`).MatchString(ct) {
		e.t.Errorf("GET %s: Content-Type %q, want text/event-stream (the browser client requires it)", path, ct)
	}
	st := &sseStream{what: "stream " + path, Header: res.Header, events: make(chan sseEvent, 100000), ended: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(st.ended)
		defer res.Body.Close()
		br := bufio.NewReader(res.Body)
		var cur sseEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			if line == "" {
				if len(cur.Lines) > 0 {
					st.events <- cur
				}
				cur = sseEvent{}
				continue
			}
			cur.Lines = append(cur.Lines, line)
			if v, ok := strings.CutPrefix(line, "event:"); ok {
				cur.Event = strings.TrimPrefix(v, " ")
			} else if v, ok := strings.CutPrefix(line, "data:"); ok {
				if cur.Data != "" {
					cur.Data += "\n"
				}
				cur.Data += strings.TrimPrefix(v, " ")
			}
		}
	}()
	e.t.Cleanup(st.close)
	return st, nil
}

// listenFail requires opening the stream at path to fail with that error
// (as the official client sees it: a status, the error body ignored). A
// stream that opens instead fails the test at once, not at a timeout.
func (e *chatEnv) listenFail(key, path string, status int, typ string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.s.URL+e.base+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if key != "" {
		req.Header.Set("x-user-key", key)
	}
	res, err := sseClient.Do(req)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		e.t.Fatalf("GET %s: the stream opened (200), want %d %s", path, status, typ)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("GET %s: reading the error: %v", path, err)
	}
	(&response{t: e.t, what: "GET " + path, Status: res.StatusCode, Header: res.Header, Body: body}).fail(status, typ)
}

func (st *sseStream) close() {
	st.cancel()
	<-st.ended
}

// chatSignal is a decoded signal.
type chatSignal struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
	Raw  sseEvent       `json:"-"`
}

// next returns the next event, pings included; ok is false when the stream
// ended first. It fails the test after signalTimeout.
func (st *sseStream) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	timer := time.NewTimer(signalTimeout)
	defer timer.Stop()
	select {
	case ev := <-st.events:
		return ev, true
	case <-st.ended:
		select {
		case ev := <-st.events:
			return ev, true
		default:
			return sseEvent{}, false
		}
	case <-timer.C:
		t.Fatalf("%s: nothing within %s", st.what, signalTimeout)
	}
	return sseEvent{}, false
}

// signal returns the next signal, skipping pings, and checks its framing:
// exactly `event: message` and one `data:` line of a {type, data} object.
func (st *sseStream) signal(t *testing.T) chatSignal {
	t.Helper()
	// Pings do not extend the wait: a signal that never comes fails the
	// test after signalTimeout however often the server pings.
	start := time.Now()
	for {
		ev, ok := st.next(t)
		if !ok {
			t.Fatalf("%s: the stream ended while a signal was expected", st.what)
		}
		if ev.Data == "ping" {
			if time.Since(start) > signalTimeout {
				t.Fatalf("%s: only pings for %s", st.what, signalTimeout)
			}
			continue
		}
		if len(ev.Lines) != 2 || ev.Lines[0] != "event: message" || ev.Lines[1] != "data: "+ev.Data {
			t.Fatalf("%s: event framed as %q, want exactly [\"event: message\", \"data: <json>\"]", st.what, ev.Lines)
		}
		var s chatSignal
		if err := json.Unmarshal([]byte(ev.Data), &s); err != nil || s.Type == "" || s.Data == nil {
			t.Fatalf("%s: data %q is not a {type, data} signal: %v", st.what, ev.Data, err)
		}
		var top map[string]any
		_ = json.Unmarshal([]byte(ev.Data), &top)
		if len(top) != 2 {
			t.Errorf("%s: signal has keys %v, want exactly type and data", st.what, sortedKeys(top))
		}
		s.Raw = ev
		return s
	}
}

// expect reads the next signal and requires its type.
func (st *sseStream) expect(t *testing.T, typ string) map[string]any {
	t.Helper()
	s := st.signal(t)
	if s.Type != typ {
		t.Fatalf("%s: signal %s %v, want a %s signal", st.what, s.Type, s.Data, typ)
	}
	return s.Data
}

// skipTo reads signals until one of type typ and returns it: for streams
// opened right after a write whose signal may or may not reach them (with
// PostgreSQL, signals travel through NOTIFY and may arrive after the
// subscription).
func (st *sseStream) skipTo(t *testing.T, typ string) map[string]any {
	t.Helper()
	for {
		if s := st.signal(t); s.Type == typ {
			return s.Data
		}
	}
}

// waitEnd requires the server to end the stream within signalTimeout; it
// returns the signals (pings left out) that came before the end.
func (st *sseStream) waitEnd(t *testing.T) []sseEvent {
	t.Helper()
	timer := time.NewTimer(signalTimeout)
	defer timer.Stop()
	var got []sseEvent
	for {
		select {
		case ev := <-st.events:
			if ev.Data != "ping" {
				got = append(got, ev)
			}
		case <-st.ended:
			for {
				select {
				case ev := <-st.events:
					if ev.Data != "ping" {
						got = append(got, ev)
					}
				default:
					return got
				}
			}
		case <-timer.C:
			t.Fatalf("%s: still open %s after it should have ended", st.what, signalTimeout)
		}
	}
}

// ---- assertions on JSON ----

var zuluRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z$`)

// wantDate requires a UTC date with Z, as the client's zod datetime() does.
func wantDate(t *testing.T, v any, what string) time.Time {
	t.Helper()
	s, _ := v.(string)
	if !zuluRe.MatchString(s) {
		t.Fatalf("%s = %#v, want an ISO 8601 UTC date ending in Z", what, v)
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s = %q: %v", what, s, err)
	}
	if d := time.Since(at); d < -time.Minute || d > 10*time.Minute {
		t.Fatalf("%s = %q is not about now", what, s)
	}
	return at
}

// wantKeys requires exactly these keys in m.
func wantKeys(t *testing.T, m map[string]any, what string, keys ...string) {
	t.Helper()
	sort.Strings(keys)
	if got := sortedKeys(m); !reflect.DeepEqual(got, keys) {
		t.Fatalf("%s has keys %v, want exactly %v: %v", what, got, keys, m)
	}
}

// jsonOf round-trips v through JSON, so that it compares with decoded bodies.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantEqual(t *testing.T, got, want any, format string, args ...any) {
	t.Helper()
	if g, w := jsonOf(t, got), jsonOf(t, want); !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Fatalf("%s:\n got: %s\nwant: %s", fmt.Sprintf(format, args...), gb, wb)
	}
}

// botEventJobs lists the bot_event jobs about an internal conversation id.
func (e *chatEnv) botEventJobs(convID string) []platform.Job {
	e.t.Helper()
	js, err := e.store().ListJobs(context.Background(), convID)
	if err != nil {
		e.t.Fatalf("ListJobs %s: %v", convID, err)
	}
	var out []platform.Job
	for _, j := range js {
		if j.Kind == platform.JobBotEvent {
			out = append(out, j)
		}
	}
	return out
}
