package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/botplatform/botplatform/internal/files"
	"maps"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// What the official web chat (@botpress/webchat and its client,
// @botpress/webchat-client) asks of the Chat API beyond what the chat
// client does: a stream that opens the conversation (Initialize), user
// data and attributes, message updates and feedback, typing signals, and
// its own names for some signals (WebchatFrame). docs/webchat.md.

// MaxUserData is the most a user's data (userData) may take, as JSON.
const MaxUserData = 4096

// Feedback tags: the web chat's feedback on a message, kept as the chat
// integration's tags of the message so that the bot reads it with the
// message (getMessage, listMessages).
const (
	FeedbackTag        = "chat:feedback"
	FeedbackCommentTag = "chat:feedbackComment"
)

// applyWebchat sets the web chat's userData and attributes of in on u.
// userData is an object, or a JWT signed with the bot's secret whose claims
// are the data, or null to remove it; it is kept as the user's profile
// (JSON), which the chat client shows as is. attributes are strings (null
// removes one), or a JWT of them.
func (in UserInput) applyWebchat(b *Webhook, u *platform.ChatUser) error {
	if len(in.UserData) > 0 {
		data, err := signedObject(b, "userData", in.UserData)
		if err != nil {
			return err
		}
		switch {
		case data == nil:
			u.Profile = ""
		default:
			text, _ := json.Marshal(data)
			if len(text) > MaxUserData {
				return platform.Invalid("userData", "at most %d bytes as JSON (got %d)", MaxUserData, len(text))
			}
			u.Profile = string(text)
		}
	}
	if len(in.Attributes) > 0 {
		attrs, err := signedObject(b, "attributes", in.Attributes)
		if err != nil {
			return err
		}
		next := maps.Clone(u.Attributes)
		if next == nil {
			next = map[string]string{}
		}
		for k, v := range attrs {
			switch v := v.(type) {
			case nil:
				delete(next, k)
			case string:
				next[k] = v
			default:
				return platform.Invalid("attributes."+k, "must be a string or null")
			}
		}
		if err := platform.CheckTags("attributes", next); err != nil {
			return err
		}
		u.Attributes = next
	}
	return nil
}

// signedObject reads an object field that may also come as a JWT signed
// with the bot's secret (its claims are the object); null is nil.
func signedObject(b *Webhook, field string, raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	var token string
	if json.Unmarshal(raw, &token) == nil {
		claims := jwt.MapClaims{}
		if _, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return b.Key, nil },
			jwt.WithValidMethods([]string{"HS256"})); err != nil {
			return nil, platform.Invalid(field, "a token must be a JWT signed (HS256) with the bot's encryption key: %v", err)
		}
		for _, k := range []string{"iat", "exp", "nbf"} {
			delete(claims, k)
		}
		return claims, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, platform.Invalid(field, "must be an object or a signed token")
	}
	return obj, nil
}

// userData is the user's data as the web chat reads it: the profile when
// it holds a JSON object.
func userData(u platform.ChatUser) map[string]any {
	if !strings.HasPrefix(u.Profile, "{") {
		return nil
	}
	var d map[string]any
	if json.Unmarshal([]byte(u.Profile), &d) != nil {
		return nil
	}
	return d
}

// UserKey signs a key for the user with foreign id fid, valid until exp
// (zero: always), for a caller holding the bot's secret. The user is
// created when the key is first used.
func (s *Service) UserKey(b *Webhook, fid string, exp time.Time) (string, error) {
	if err := checkUserFID(fid); err != nil {
		return "", err
	}
	if fid == b.ID {
		return "", platform.Invalid("id", "names the bot's own user")
	}
	return SignUserKey(b.Key, fid, exp)
}

// Init is what opens the web chat: the user (with its key), the
// conversation, its latest messages (newest first) and its participants.
type Init struct {
	User         platform.ChatUser
	Key          string
	Conversation platform.Conversation
	Messages     []MessageView
	Participants []platform.ChatUser
}

// initMessages is how many of a conversation's latest messages Initialize
// returns.
const initMessages = 50

// Initialize opens the web chat for the user key's user, or a new user
// when key is empty; adminUserID (given with the bot's secret) names the
// user instead. The conversation convID is used when the user takes part in
// it; an id naming none, or none given, starts a new conversation; another
// user's conversation is refused (403). The caller subscribes to the
// conversation before calling, so that nothing is missed between.
func (s *Service) Initialize(ctx context.Context, b *Webhook, key, adminUserID, convID string) (Init, error) {
	var in Init
	var err error
	switch {
	case adminUserID != "":
		if in.Key, err = s.UserKey(b, adminUserID, time.Time{}); err != nil {
			return in, err
		}
		in.User, err = s.authenticated(ctx, b, adminUserID, nil, true)
	case key == "":
		in.User, in.Key, err = s.CreateUser(ctx, b, UserInput{})
	default:
		in.Key = key
		in.User, err = s.Authenticate(ctx, b, key, true)
	}
	if err != nil {
		return in, err
	}
	if convID != "" {
		in.Conversation, err = s.Conversation(ctx, b, in.User, convID, false)
		if e, ok := platform.AsError(err); ok && e.Type == platform.TypeResourceNotFound {
			convID, err = "", nil
		}
		if err != nil {
			return in, err
		}
	}
	if convID == "" {
		if in.Conversation, err = s.CreateConversation(ctx, b, in.User, nil, false); err != nil {
			return in, err
		}
	}
	ms, _, err := s.store.ListMessages(ctx, in.Conversation.ID, store.Page{Limit: initMessages})
	if err != nil {
		return in, err
	}
	in.Messages = s.Views(ctx, in.Conversation, ms)
	in.Participants, _, err = s.store.ListParticipants(ctx, in.Conversation.ID, store.Page{Limit: 100})
	return in, err
}

// InitSignal is the web chat's first signal.
func InitSignal(in Init) Signal {
	messages := make([]map[string]any, len(in.Messages))
	for i, m := range in.Messages {
		messages[i] = MessageJSON(m)
	}
	participants := make([]map[string]any, len(in.Participants))
	for i, p := range in.Participants {
		participants[i] = UserJSON(p)
	}
	user := UserJSON(in.User)
	user["userKey"] = in.Key
	return Signal{"init", map[string]any{"conversation": ConversationJSON(in.Conversation), "messages": messages,
		"participants": participants, "user": user}}
}

// UpdateMessage changes the payload or metadata of the caller's own
// message and signals it (message_updated).
func (s *Service) UpdateMessage(ctx context.Context, b *Webhook, u platform.ChatUser, id string, payload, metadata json.RawMessage) (MessageView, error) {
	m, c, err := s.message(ctx, b, u, id)
	if err != nil {
		return m, err
	}
	if m.UserID != u.ID {
		return m, platform.Errorf(platform.TypeForbidden, "only the sender may update message %q", id)
	}
	if payload != nil {
		m.Payload = payload
	}
	if metadata != nil {
		m.Metadata = metadata
		if string(metadata) == "null" {
			m.Metadata = nil
		}
	}
	return m, s.saveMessage(ctx, c, &m)
}

// SetFeedback records the caller's feedback on a message of a
// conversation it takes part in (value "" removes it) and signals the
// message (message_updated).
func (s *Service) SetFeedback(ctx context.Context, b *Webhook, u platform.ChatUser, id, value string, comment *string) (MessageView, error) {
	m, c, err := s.message(ctx, b, u, id)
	if err != nil {
		return m, err
	}
	m.Tags = maps.Clone(m.Tags)
	if m.Tags == nil {
		m.Tags = map[string]string{}
	}
	delete(m.Tags, FeedbackTag)
	delete(m.Tags, FeedbackCommentTag)
	if value != "" {
		m.Tags[FeedbackTag] = value
		if comment != nil && *comment != "" {
			m.Tags[FeedbackCommentTag] = *comment
		}
	}
	if err := platform.CheckTags("comment", m.Tags); err != nil {
		return m, err
	}
	return m, s.saveMessage(ctx, c, &m)
}

// saveMessage stores an updated message of c and signals it.
func (s *Service) saveMessage(ctx context.Context, c platform.Conversation, m *MessageView) error {
	unlock := s.lock(c.ID)
	defer unlock()
	m.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateMessage(ctx, m.Message, c.BotID); err != nil {
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("message", m.ID)
		}
		return err
	}
	s.MessageUpdated(c, *m)
	return nil
}

// MessageUpdated signals a message changed after it was sent.
func (s *Service) MessageUpdated(c platform.Conversation, m MessageView) {
	d := MessageJSON(m)
	d["isBot"] = m.IsBot
	s.hub.Publish(c.ID, Signal{"message_updated", d})
}

// Typing signals that the bot started (for timeoutMs, 0: the client's
// default) or stopped writing in c.
func (s *Service) Typing(c platform.Conversation, started bool, timeoutMs int) {
	if !started {
		s.hub.Publish(c.ID, Signal{"typing_stopped", map[string]any{}})
		return
	}
	d := map[string]any{}
	if timeoutMs > 0 {
		d["timeout"] = timeoutMs
	}
	s.hub.Publish(c.ID, Signal{"typing_started", d})
}

// WebchatFrames returns what turns a signal frame of a conversation of the
// bot, as the chat client receives it, into the one the web chat expects,
// or nil when the web chat has none: a bot's custom event is `custom`
// ({event: its payload}); participant_added carries the participant
// itself; users' own events and deletions are not sent.
func (s *Service) WebchatFrames(ctx context.Context, botID string) func([]byte) []byte {
	return func(frame []byte) []byte {
		var sig struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(frame, &sig) != nil {
			return frame
		}
		var out any
		switch sig.Type {
		case "event_created":
			var e struct {
				Payload json.RawMessage `json:"payload"`
				IsBot   bool            `json:"isBot"`
			}
			if json.Unmarshal(sig.Data, &e) != nil || !e.IsBot {
				return nil
			}
			out = Signal{"custom", map[string]any{"event": e.Payload}}
		case "participant_added":
			var p struct{ ConversationID, ParticipantID string }
			if json.Unmarshal(sig.Data, &p) != nil {
				return nil
			}
			u, err := s.store.GetChatUser(ctx, botID, p.ParticipantID)
			if err != nil { // removed since
				return nil
			}
			out = Signal{"participant_added", map[string]any{"conversationId": p.ConversationID, "participant": UserJSON(u)}}
		case "message_deleted":
			return nil
		default:
			return frame
		}
		b, _ := json.Marshal(out)
		return b
	}
}

// conversationStarted completes the web chat's conversation_started
// event (other payloads are returned as they are): its data gets
// status.isInitial, true while the conversation has no message, so that
// the widget and the bot tell a new conversation from a reopened one.
func (s *Service) conversationStarted(ctx context.Context, c platform.Conversation, payload json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Type != "conversation_started" {
		return payload, nil
	}
	ms, _, err := s.store.ListMessages(ctx, c.ID, store.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if p.Data == nil {
		p.Data = map[string]any{}
	}
	p.Data["status"] = map[string]any{"isInitial": len(ms) == 0}
	return json.Marshal(map[string]any{"type": p.Type, "data": p.Data})
}

// The webchat integration's events, as bots receive a web chat user's
// custom events in its conversations.
const (
	WebchatTrigger             = "webchat:trigger"
	WebchatConversationStarted = "webchat:conversationStarted"
)

// WebchatEvent is a custom event of the web chat (payload, as the Chat API
// stored it) as the webchat integration's bot receives it, in conversation
// convFID from user userFID: `conversation_started` is
// webchat:conversationStarted {userId, conversationId}; `custom` is
// webchat:trigger {origin, userId, conversationId, payload: its data}, as is
// any other payload, whole.
func WebchatEvent(payload json.RawMessage, convFID, userFID string) (string, map[string]any) {
	var p struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(payload, &p)
	if p.Type == "conversation_started" {
		return WebchatConversationStarted, map[string]any{"userId": userFID, "conversationId": convFID}
	}
	data := payload
	if p.Type == "custom" {
		data = p.Data
	}
	var obj map[string]json.RawMessage
	var out any = json.RawMessage(data) // as sent, in its order
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		// The trigger's payload is an object: another value is its value.
		var v any
		_ = json.Unmarshal(data, &v)
		out = map[string]any{"value": v}
	}
	return WebchatTrigger, map[string]any{"origin": "website", "userId": userFID, "conversationId": convFID, "payload": out}
}

// WebchatUserData is the data the web chat gave the bot's user userID
// (foreign or internal id) with `userData`, as the webchat integration's
// getUserData answers it: each value a string, other values as JSON.
func (s *Service) WebchatUserData(ctx context.Context, botID, userID string) (map[string]string, error) {
	u, err := s.store.GetChatUser(ctx, botID, userID)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("user", userID)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range userData(u) {
		if str, ok := v.(string); ok {
			out[k] = str
			continue
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out, nil
}

// WebchatVisibility tells the web chat of c to show, hide or toggle its
// window (webchat_visibility).
func (s *Service) WebchatVisibility(c platform.Conversation, visibility string) {
	s.hub.Publish(c.ID, Signal{"webchat_visibility", map[string]any{"visibility": visibility}})
}

// WebchatConfig hands the web chat of c a change of its configuration
// (webchat_config).
func (s *Service) WebchatConfig(c platform.Conversation, config map[string]any) {
	s.hub.Publish(c.ID, Signal{"webchat_config", map[string]any{"config": config}})
}

// WebchatCustom hands the page of the web chat of c a custom event
// (custom), which it passes to the page's listeners.
func (s *Service) WebchatCustom(c platform.Conversation, event any) {
	s.hub.Publish(c.ID, Signal{"custom", map[string]any{"event": event}})
}

// MaxUpload is the largest file a chat user may upload (the workspace's
// file size limit and quota apply too).
const MaxUpload = 25 << 20

// UploadExpiry is how long a chat user's file is kept when its upload
// names no expiry; none is kept longer than files.MaxExpiry.
const UploadExpiry = 30 * 24 * time.Hour

// uploadTypes are the content types a chat user may upload: media and
// documents that browsers show or download, never a page or a script that
// would run on this server's origin.
var uploadTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true, "image/bmp": true,
	"image/heic": true, "image/heif": true, "application/pdf": true, "text/plain": true, "text/csv": true,
	"application/octet-stream": true, "application/zip": true, "application/msword": true, "application/vnd.ms-excel": true,
	"application/vnd.ms-powerpoint": true, "application/vnd.oasis.opendocument.text": true,
	"application/vnd.oasis.opendocument.spreadsheet": true, "application/vnd.oasis.opendocument.presentation": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         true,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
}

// Upload is what a chat user's upload (POST /files) becomes in the Files
// API: in checked (never indexed; its size and content type, see
// checkUpload), expiring after UploadExpiry unless it says sooner, tagged
// `user` with the uploader's id, keyed under the uploader's own prefix
// (chat/<user>/<key>) in the namespace of the webhook's integration, and
// owned by the user; with the caller the Files API stores it as.
func (s *Service) Upload(ctx context.Context, b *Webhook, u platform.ChatUser, in files.UpsertInput) (files.UpsertInput, *files.Caller, error) {
	if in.Index {
		return in, nil, platform.Invalid("index", "a chat user's file is not indexed")
	}
	if in.ContentType == "" {
		in.ContentType = files.ContentTypeOf(in.Key)
	}
	if err := checkUpload(in.Size, in.ContentType); err != nil {
		return in, nil, err
	}
	if in.ExpiresAt == nil {
		exp := platform.FormatTime(s.clock.Now().Add(UploadExpiry))
		in.ExpiresAt = &exp
	}
	in.Tags = maps.Clone(in.Tags)
	if in.Tags == nil {
		in.Tags = map[string]string{}
	}
	in.Tags["user"] = u.FID
	in.Key = "chat/" + u.ID + "/" + in.Key
	ws, err := s.store.GetBotWorkspace(ctx, b.ID)
	if err != nil {
		return in, nil, err
	}
	c := &files.Caller{BotID: b.ID, WorkspaceID: ws, CanWrite: true, Integration: true,
		Scope: "integration:" + b.channel(), Owner: platform.FileOwner{Type: "user", ID: u.FID}}
	return in, c, nil
}

// checkUpload checks what a chat user asks to upload: its size and its
// content type (audio and video of any kind; see uploadTypes).
func checkUpload(size int64, contentType string) error {
	if size > MaxUpload {
		return platform.Errorf(platform.TypePayloadTooLarge, "size: a chat user's file is at most %d bytes (got %d)", MaxUpload, size)
	}
	t, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	t = strings.TrimSpace(t)
	if uploadTypes[t] || strings.HasPrefix(t, "audio/") || strings.HasPrefix(t, "video/") {
		return nil
	}
	return platform.Invalid("contentType", "a chat user may not upload %q: images, audio, video, PDF, text and office documents only", contentType)
}
