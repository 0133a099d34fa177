package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/webchat"
)

// chatRoutes is the Chat API's route table (compat-notes §1.4), under
// {chat path}/{webhook}. The listen path carries the conversation id
// unescaped, slashes included, so it is matched by a trailing wildcard.
func (a *api) chatRoutes(prefix string) *table {
	t := newTable("Chat")
	p := prefix + "/{webhook}"
	t.handle("GET "+p+"/hello/", "chatProbe", nil, a.chatBot(a.chatHello))
	t.handle("GET "+p+"/hello", "chatHello", nil, a.chatBot(a.chatHello))
	t.handle("POST "+p+"/users", "chatCreateUser", createUserSchema, a.chatBot(a.createUser))
	t.handle("POST "+p+"/users/get-or-create", "chatGetOrCreateUser", updateUserSchema, a.chatUserOrNew(a.getOrCreateUser))
	t.handle("GET "+p+"/users/me", "chatGetUser", nil, a.chatUser(a.getUser))
	t.handle("PUT "+p+"/users/me", "chatUpdateUser", updateUserSchema, a.chatUser(a.updateUser))
	t.handle("DELETE "+p+"/users/me", "chatDeleteUser", emptyBodySchema, a.chatUser(a.deleteUser))
	t.handle("POST "+p+"/conversations", "chatCreateConversation", createConversationSchema, a.chatUser(a.createConversation))
	t.handle("POST "+p+"/conversations/get-or-create", "chatGetOrCreateConversation", getOrCreateConversationSchema, a.chatUser(a.getOrCreateConversation))
	t.handle("GET "+p+"/conversations", "chatListConversations", nil, a.chatUser(a.listConversations))
	t.handle("GET "+p+"/conversations/{id}", "chatGetConversation", nil, a.chatUser(a.getConversation))
	t.handle("DELETE "+p+"/conversations/{id}", "chatDeleteConversation", emptyBodySchema, a.chatUser(a.deleteConversation))
	t.handle("GET "+p+"/conversations/{id}/messages", "chatListMessages", nil, a.chatUser(a.listMessages))
	t.handle("GET "+p+"/conversations/{id}/participants", "chatListParticipants", nil, a.chatUser(a.listParticipants))
	t.handle("POST "+p+"/conversations/{id}/participants", "chatAddParticipant", addParticipantSchema, a.chatUser(a.addParticipant))
	t.handle("GET "+p+"/conversations/{id}/participants/{userId}", "chatGetParticipant", nil, a.chatUser(a.getParticipant))
	t.handle("DELETE "+p+"/conversations/{id}/participants/{userId}", "chatRemoveParticipant", emptyBodySchema, a.chatUser(a.removeParticipant))
	// Streams of clients that do not ask for an event stream (chatStreams
	// serves those that do, whatever the id looks like).
	t.serve("GET "+p+"/conversations/{rest...}",
		t.op("GET "+p+"/conversations/{id}/listen", "chatListenConversation", nil, a.chatUser(a.listen)))
	t.handle("POST "+p+"/messages", "chatCreateMessage", chat.MessageSchema, a.chatUser(a.createMessage))
	t.handle("GET "+p+"/messages/{id}", "chatGetMessage", nil, a.chatUser(a.getMessage))
	t.handle("DELETE "+p+"/messages/{id}", "chatDeleteMessage", emptyBodySchema, a.chatUser(a.deleteMessage))
	t.handle("POST "+p+"/events", "chatCreateEvent", createEventSchema, a.chatUser(a.createEvent))
	t.handle("GET "+p+"/events/{id}", "chatGetEvent", nil, a.chatUser(a.getEvent))
	a.webchatClientRoutes(t, p)
	return t
}

// chatStreams serves signal streams before any routing. The chat client
// puts the conversation id in the listen path unescaped, so an id may hold
// slashes, empty segments and words such as "participants": the mux would
// redirect (cleaning the path) or take it for another route. A GET asking
// for an event stream at {chat}/{webhook}/conversations/{id}/listen is
// therefore a listen, whatever the id looks like.
func (a *api) chatStreams(prefix string, next http.Handler) http.Handler {
	listen := a.cors(prefix, a.chatUser(a.listen))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			if rest, ok := strings.CutPrefix(r.URL.Path, prefix+"/"); ok {
				webhook, convPath, ok := strings.Cut(rest, "/conversations/")
				if ok && webhook != "" && !strings.Contains(webhook, "/") && strings.HasSuffix(convPath, "/listen") {
					r.SetPathValue("webhook", webhook)
					r.SetPathValue("rest", convPath)
					setRoute(r, prefix+"/{webhook}/conversations/{id}/listen", true)
					listen.ServeHTTP(w, r)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// cors answers browsers calling the Chat API of the bot the path names.
// A page of an origin the bot allows (webchat.Allowed), or of this
// server's own, gets the allow headers: the origin echoed (never *) with
// credentials, as the chat client sends them. Other origins get none, and
// their preflights are refused, so that browsers do not send the request;
// callers that are not browsers send no Origin and are not concerned.
func (a *api) cors(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		allowed, err := a.chatOrigin(r, prefix, origin)
		if !allowed {
			if !preflight {
				next.ServeHTTP(w, r) // the browser keeps the answer from the page
				return
			}
			if err == nil {
				err = platform.Errorf(platform.TypeForbidden, "the origin %s may not call this bot's Chat API from a browser: "+
					"add it to the bot's allowed origins (integrations.chat.configuration.%s, docs/webchat.md)", origin, webchat.OriginsKey)
			}
			writeError(w, r, a.Log, err)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		if preflight {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, x-user-key, x-admin-secret, timeout, Accept, Cache-Control, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// chatOrigin tells whether origin may call the Chat API r is for: this
// server's own origin may, others if the webhook's bot allows them. The
// webhook found is kept for the request's handler.
func (a *api) chatOrigin(r *http.Request, prefix, origin string) (bool, error) {
	if origin == requestOrigin(r) || a.PublicURL != "" && origin == strings.TrimRight(a.PublicURL, "/") {
		return true, nil
	}
	rest, _ := strings.CutPrefix(r.URL.Path, prefix+"/")
	id, _, _ := strings.Cut(rest, "/")
	if id == "" {
		return false, nil
	}
	b, err := a.Chat.Webhook(r.Context(), id)
	if err != nil {
		return false, err
	}
	if rt, ok := r.Context().Value(routeKey{}).(*route); ok {
		rt.webhook = b
	}
	return webchat.Allowed(b.Origins, origin), nil
}

// requestOrigin is the origin the request was sent to, as a browser
// names it.
func requestOrigin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

func (a *api) chatHello(w http.ResponseWriter, r *http.Request, b *chat.Webhook) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("Hello, Botpress User"))
	return nil
}

var (
	userProps = `"name":{"type":"string"},"pictureUrl":{"type":"string"},"profile":{"type":"string","maxLength":1000},` +
		`"userData":{"type":["object","string","null"]},"attributes":{"type":["object","string"],"additionalProperties":{"type":["string","null"]}}`
	createUserSchema              = schema("create-user.json", `{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"},`+userProps+`}}`)
	updateUserSchema              = schema("update-user.json", `{"type":"object","additionalProperties":false,"properties":{`+userProps+`}}`)
	createConversationSchema      = schema("create-conversation.json", `{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"}}}`)
	getOrCreateConversationSchema = schema("get-or-create-conversation.json", `{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string"}}}`)
	addParticipantSchema          = schema("add-participant.json", `{"type":"object","additionalProperties":false,"required":["userId"],"properties":{"userId":{"type":"string"}}}`)
	createEventSchema             = schema("create-event.json", `{"type":"object","additionalProperties":false,"required":["payload","conversationId"],
		"properties":{"payload":{"type":"object"},"conversationId":{"type":"string"},"bindConversation":{"type":"boolean"},"bindUser":{"type":"boolean"}}}`)
)

func (a *api) createUser(w http.ResponseWriter, r *http.Request, b *chat.Webhook) error {
	var in chat.UserInput
	if err := decode(r, &in); err != nil {
		return err
	}
	u, key, err := a.Chat.CreateUser(r.Context(), b, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"user": chat.UserJSON(u), "key": key})
	return nil
}

func (a *api) getOrCreateUser(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in chat.UserInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Name != nil || in.PictureURL != nil || in.Profile != nil || in.UserData != nil || in.Attributes != nil {
		var err error
		if u, err = a.Chat.UpdateUser(r.Context(), b, u, in); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"user": chat.UserJSON(u)})
	return nil
}

func (a *api) getUser(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	writeJSON(w, http.StatusOK, map[string]any{"user": chat.UserJSON(u)})
	return nil
}

func (a *api) updateUser(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in chat.UserInput
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := a.Chat.UpdateUser(r.Context(), b, u, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": chat.UserJSON(u)})
	return nil
}

func (a *api) deleteUser(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Chat.DeleteUser(r.Context(), u); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) createConversation(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in struct{ ID *string }
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := a.Chat.CreateConversation(r.Context(), b, u, in.ID, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"conversation": chat.ConversationJSON(c)})
	return nil
}

func (a *api) getOrCreateConversation(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in struct{ ID *string }
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := a.Chat.CreateConversation(r.Context(), b, u, in.ID, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"conversation": chat.ConversationJSON(c)})
	return nil
}

func (a *api) getConversation(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	c, err := a.Chat.Conversation(r.Context(), b, u, r.PathValue("id"), false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation": chat.ConversationJSON(c)})
	return nil
}

func (a *api) deleteConversation(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Chat.DeleteConversation(r.Context(), b, u, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

// chatPage reads nextToken (the chat client sends no page size).
func chatPage(r *http.Request) (store.Page, error) { return page(newQuery(r), 20) }

func (a *api) listConversations(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	p, err := chatPage(r)
	if err != nil {
		return err
	}
	cs, next, err := a.Chat.ListConversations(r.Context(), b, u, p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(cs))
	for i, c := range cs {
		out[i] = chat.ConversationJSON(c.Conversation)
		if c.LastMessage != nil {
			out[i]["lastMessage"] = chat.MessageJSON(*c.LastMessage)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) listParticipants(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	p, err := chatPage(r)
	if err != nil {
		return err
	}
	ps, next, err := a.Chat.ListParticipants(r.Context(), b, u, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ps))
	for i, x := range ps {
		out[i] = chat.UserJSON(x)
	}
	writeJSON(w, http.StatusOK, map[string]any{"participants": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) addParticipant(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in struct{ UserID string }
	if err := decode(r, &in); err != nil {
		return err
	}
	p, err := a.Chat.AddParticipant(r.Context(), b, u, r.PathValue("id"), in.UserID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"participant": chat.UserJSON(p)})
	return nil
}

func (a *api) getParticipant(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	p, err := a.Chat.GetParticipant(r.Context(), b, u, r.PathValue("id"), r.PathValue("userId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"participant": chat.UserJSON(p)})
	return nil
}

func (a *api) removeParticipant(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Chat.RemoveParticipant(r.Context(), b, u, r.PathValue("id"), r.PathValue("userId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) createMessage(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in chat.MessageInput
	if err := decode(r, &in); err != nil {
		return err
	}
	in = in.Clean()
	m, err := a.Chat.CreateMessage(r.Context(), b, u, in.ConversationID, in.Payload, in.Metadata)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"message": chat.MessageJSON(m)})
	return nil
}

func (a *api) getMessage(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	m, err := a.Chat.GetMessage(r.Context(), b, u, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": chat.MessageJSON(m)})
	return nil
}

func (a *api) deleteMessage(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Chat.DeleteMessage(r.Context(), b, u, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) listMessages(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	p, err := chatPage(r)
	if err != nil {
		return err
	}
	ms, next, err := a.Chat.ListMessages(r.Context(), b, u, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = chat.MessageJSON(m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "meta": metaJSON{next}})
	return nil
}

func (a *api) createEvent(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	var in struct {
		Payload        json.RawMessage
		ConversationID string
		// The web chat's; events are always of the conversation and the
		// user here.
		BindConversation, BindUser *bool
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	e, err := a.Chat.CreateEvent(r.Context(), b, u, in.ConversationID, in.Payload)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"event": chat.EventJSON(e)})
	return nil
}

func (a *api) getEvent(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	e, err := a.Chat.GetEvent(r.Context(), b, u, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"event": chat.EventJSON(e)})
	return nil
}

// listen streams a conversation's signals as Server-Sent Events: each
// signal a default `message` event, and `data: ping` when nothing else was
// sent for the ping interval.
// streamHold is how long a new signal stream waits, after its headers,
// before its first signal.
const streamHold = 10 * time.Millisecond

func (a *api) listen(w http.ResponseWriter, r *http.Request, b *chat.Webhook, u platform.ChatUser) error {
	id, ok := strings.CutSuffix(r.PathValue("rest"), "/listen")
	if !ok || id == "" {
		return platform.Errorf(platform.TypeResourceNotFound, "no route for %s %s", r.Method, r.URL.Path)
	}
	sub, err := a.Chat.Listen(r.Context(), b, u, id)
	if err != nil {
		return err
	}
	return a.stream(w, r, sub, nil, nil)
}

// stream sends sub's signals as Server-Sent Events until the request or
// the subscription ends: each signal a default `message` event, and
// `data: ping` when nothing else was sent for the ping interval. first,
// if any, is sent before them; each frame goes through each (nil: as is;
// each returning nil: not sent).
func (a *api) stream(w http.ResponseWriter, r *http.Request, sub *chat.Subscription, first []byte, each func([]byte) []byte) error {
	defer sub.Close()
	defer a.Metrics.StreamOpened()()
	// A stream has no end time, but each write has one: a listener that
	// stops reading is disconnected, its connection and slot freed.
	rc := http.NewResponseController(w)
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(a.StreamWriteTimeout)) }
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	deadline()
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil
	}
	// The official client attaches its handlers only once the stream is
	// open: signals arriving together with the headers would reach none.
	// The first signals therefore wait a moment (unless the stream ends).
	hold := time.NewTimer(streamHold)
	select {
	case <-r.Context().Done():
		hold.Stop()
		return nil
	case <-sub.Done:
		hold.Stop()
	case <-hold.C:
	}
	interval := a.PingInterval
	ping := time.NewTimer(interval)
	defer ping.Stop()
	if first != nil && !sendFrame(w, rc, deadline, first) {
		return nil
	}
	send := func(frame []byte) bool {
		if each != nil {
			if frame = each(frame); frame == nil {
				return true
			}
		}
		return sendFrame(w, rc, deadline, frame)
	}
	for {
		var frame []byte
		select {
		case <-r.Context().Done():
			return nil
		case <-sub.Done:
			// Signals queued before the stream was ended (a participant
			// removed, say) happened while the user could see them.
			for {
				select {
				case frame := <-sub.C:
					if !send(frame) {
						return nil
					}
				default:
					return nil
				}
			}
		case frame = <-sub.C:
		case <-ping.C:
			frame = []byte("ping")
		}
		if !send(frame) {
			return nil
		}
		ping.Reset(interval)
	}
}

// sendFrame writes one signal of a stream: false when the listener is gone.
func sendFrame(w http.ResponseWriter, rc *http.ResponseController, deadline func(), frame []byte) bool {
	deadline()
	if _, err := w.Write(append(append([]byte("event: message\ndata: "), frame...), '\n', '\n')); err != nil {
		return false
	}
	return rc.Flush() == nil
}
