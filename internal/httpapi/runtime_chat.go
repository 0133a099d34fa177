package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/runtimeapi"
	"github.com/botplatform/botplatform/internal/store"
)

// The Runtime API's users, conversations, participants, messages and tag
// values (docs/runtime-api.md): a bot's own data, by bot API key or by a
// token with x-bot-id.
func (a *api) runtimeChatRoutes(t *table) {
	rt := a.RuntimeAPI
	for _, r := range []struct {
		pattern, id string
		body        *jsonbody.Schema
		write       bool
		f           callerFunc
	}{
		{"POST /v1/chat/users", "createUser", rtUserSchema, true, rtCreate("user", rt.CreateUser, runtimeapi.UserJSON)},
		{"POST /v1/chat/users/get-or-create", "getOrCreateUser", rtUserSchema, true, rtGetOrCreate("user", rt.GetOrCreateUser, runtimeapi.UserJSON)},
		{"GET /v1/chat/users", "listUsers", nil, false, a.rtListUsers},
		{"GET /v1/chat/users/{id}", "getUser", nil, false, rtGet("user", rt.User, runtimeapi.UserJSON)},
		{"PUT /v1/chat/users/{id}", "updateUser", rtUserUpdateSchema, true, rtUpdate("user", rt.UpdateUser, runtimeapi.UserJSON)},
		{"DELETE /v1/chat/users/{id}", "deleteUser", nil, true, rtDelete(rt.DeleteUser)},
		{"POST /v1/chat/conversations", "createConversation", rtConversationSchema, true, rtCreate("conversation", rt.CreateConversation, runtimeapi.NewConversationJSON)},
		{"POST /v1/chat/conversations/get-or-create", "getOrCreateConversation", rtConversationSchema, true, rtGetOrCreate("conversation", rt.GetOrCreateConversation, conversationJSON)},
		{"GET /v1/chat/conversations", "listConversations", nil, false, a.rtListConversations},
		{"GET /v1/chat/conversations/{id}", "getConversation", nil, false, rtGet("conversation", rt.CountedConversation, conversationJSON)},
		{"PUT /v1/chat/conversations/{id}", "updateConversation", rtConversationUpdateSchema, true, rtUpdate("conversation", rt.UpdateConversation, conversationJSON)},
		{"DELETE /v1/chat/conversations/{id}", "deleteConversation", nil, true, rtDelete(rt.DeleteConversation)},
		{"POST /v1/chat/conversations/{id}/participants", "addParticipant", rtParticipantSchema, true, a.rtAddParticipant},
		{"GET /v1/chat/conversations/{id}/participants", "listParticipants", nil, false, a.rtListParticipants},
		{"GET /v1/chat/conversations/{id}/participants/{userId}", "getParticipant", nil, false, a.rtGetParticipant},
		{"DELETE /v1/chat/conversations/{id}/participants/{userId}", "removeParticipant", nil, true, a.rtRemoveParticipant},
		{"POST /v1/chat/messages", "createMessage", rtMessageSchema, true, rtCreate("message", rt.CreateMessage, runtimeapi.MessageJSON)},
		{"POST /v1/chat/messages/get-or-create", "getOrCreateMessage", rtMessageSchema, true, rtGetOrCreate("message", rt.GetOrCreateMessage, runtimeapi.MessageJSON)},
		{"POST /v1/chat/messages/import-messages", "importMessages", rtImportSchema, true, a.rtImportMessages},
		{"GET /v1/chat/messages", "listMessages", nil, false, a.rtListMessages},
		{"GET /v1/chat/messages/{id}", "getMessage", nil, false, rtGet("message", rt.Message, runtimeapi.MessageJSON)},
		{"PUT /v1/chat/messages/{id}", "updateMessage", rtMessageUpdateSchema, true, rtUpdate("message", rt.UpdateMessage, runtimeapi.MessageJSON)},
		{"DELETE /v1/chat/messages/{id}", "deleteMessage", nil, true, rtDelete(rt.DeleteMessage)},
		{"GET /v1/chat/tags/{key}/values", "listTagValues", nil, false, a.rtListTagValues},
	} {
		f := r.f
		if r.write {
			f = writer(f)
		}
		t.handle(r.pattern, r.id, r.body, a.caller(f))
	}
}

// writer refuses callers that may only read.
func writer(f callerFunc) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
		if !c.CanWrite {
			return platform.Errorf(platform.TypeForbidden, "this operation needs the developer role or a bot API key")
		}
		return f(w, r, c)
	}
}

// rtCreate decodes the body its route declares and answers 201 {key: the new row}.
func rtCreate[T, In any](key string, create func(ctx context.Context, botID string, in In) (T, error), render func(T) map[string]any) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
		var in In
		if err := decode(r, &in); err != nil {
			return err
		}
		v, err := create(r.Context(), c.BotID, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, map[string]any{key: runtimeapi.Unprefixed(c.IntegrationAlias(), render(v))})
		return nil
	}
}

// rtGetOrCreate is rtCreate for getOrCreate operations: 200 {key, meta: {created}}.
func rtGetOrCreate[T, In any](key string, find func(ctx context.Context, botID string, in In) (T, bool, error), render func(T) map[string]any) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
		var in In
		if err := decode(r, &in); err != nil {
			return err
		}
		v, created, err := find(r.Context(), c.BotID, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{key: runtimeapi.Unprefixed(c.IntegrationAlias(), render(v)), "meta": map[string]bool{"created": created}})
		return nil
	}
}

// rtGet answers {key: the rendered row} for the path's id.
func rtGet[T any](key string, get func(ctx context.Context, botID, id string) (T, error), render func(T) map[string]any) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
		v, err := get(r.Context(), c.BotID, r.PathValue("id"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{key: runtimeapi.Unprefixed(c.IntegrationAlias(), render(v))})
		return nil
	}
}

// rtUpdate decodes the body its route declares and answers {key: the updated row}.
func rtUpdate[T, In any](key string, update func(ctx context.Context, botID, id string, in In) (T, error), render func(T) map[string]any) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
		var in In
		if err := decode(r, &in); err != nil {
			return err
		}
		v, err := update(r.Context(), c.BotID, r.PathValue("id"), in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{key: runtimeapi.Unprefixed(c.IntegrationAlias(), render(v))})
		return nil
	}
}

// rtDelete deletes the path's id and answers {}.
func rtDelete(del func(ctx context.Context, botID, id string) error) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
		if err := del(r.Context(), c.BotID, r.PathValue("id")); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{})
		return nil
	}
}

func conversationJSON(c store.CountedConversation) map[string]any {
	return runtimeapi.ConversationJSON(c.Conversation, c.Messages)
}

// writeList answers a page of a list: {key: items rendered, meta}.
func writeList[T any](w http.ResponseWriter, key string, items []T, next string, render func(T) map[string]any) {
	out := make([]map[string]any, len(items))
	for i, v := range items {
		out[i] = render(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{key: out, "meta": metaJSON{next}})
}

const tagsSchema = `{"type":"object","additionalProperties":{"type":"string"}}`
const discriminateSchema = `{"type":"array","items":{"type":"string"},"maxItems":50}`

// keyValues is the schema of the tags, properties and attributes of users
// and conversations: the official client types allow null (removal) where
// a value may change, and the same map serves creation.
const keyValues = `{"type":"object","additionalProperties":{"type":["string","null"]}}`

var (
	rtUserSchema = schema("runtime-user.json", `{"type":"object","additionalProperties":false,"properties":{
		"tags":`+keyValues+`,"properties":`+keyValues+`,"attributes":`+keyValues+`,"name":{"type":"string"},"pictureUrl":{"type":"string"},
		"integrationName":{"type":"string","maxLength":200},"discriminateByTags":`+discriminateSchema+`}}`)
	rtUserUpdateSchema = schema("runtime-user-update.json", `{"type":"object","additionalProperties":false,"properties":{
		"tags":`+keyValues+`,"properties":`+keyValues+`,"attributes":`+keyValues+`,"name":{"type":["string","null"]},"pictureUrl":{"type":["string","null"]}}}`)
	rtConversationSchema = schema("runtime-conversation.json", `{"type":"object","additionalProperties":false,"required":["channel"],"properties":{
		"channel":{"type":"string"},"tags":`+keyValues+`,"properties":`+keyValues+`,"integrationName":{"type":"string","maxLength":200},
		"discriminateByTags":`+discriminateSchema+`}}`)
	rtConversationUpdateSchema = schema("runtime-conversation-update.json", `{"type":"object","additionalProperties":false,"properties":{
		"tags":`+keyValues+`,"properties":`+keyValues+`,"currentTaskId":{"type":"string"}}}`)
	rtParticipantSchema = schema("runtime-participant.json", `{"type":"object","additionalProperties":false,"required":["userId"],"properties":{"userId":{"type":"string","minLength":1}}}`)
	rtMessageProps      = `"payload":{"type":"object"},"userId":{"type":"string","minLength":1},"conversationId":{"type":"string","minLength":1},
		"type":{"type":"string","minLength":1},"tags":` + tagsSchema + `,"origin":{"enum":["synthetic"]}`
	rtMessageSchema = schema("runtime-message.json", `{"type":"object","additionalProperties":false,"required":["payload","userId","conversationId","type"],
		"properties":{`+rtMessageProps+`,"discriminateByTags":`+discriminateSchema+`,"schedule":{"type":"object"}}}`)
	rtMessageUpdateSchema = schema("runtime-message-update.json", `{"type":"object","additionalProperties":false,"properties":{
		"tags":`+tagsSchema+`,"payload":{"type":"object"}}}`)
	rtImportSchema = schema("runtime-import-messages.json", `{"type":"object","additionalProperties":false,"required":["messages"],"properties":{
		"messages":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["payload","userId","conversationId","type","createdAt"],
		"properties":{`+rtMessageProps+`,"createdAt":{"type":"string"},"discriminateByTags":`+discriminateSchema+`}}}}}`)
)

// dateRange reads afterDate and beforeDate.
func dateRange(q query) (store.DateRange, error) {
	var d store.DateRange
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"afterDate", &d.After}, {"beforeDate", &d.Before}} {
		if s := q.str(f.name); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return d, platform.Errorf(platform.TypeInvalidQuery, "%s: must be an ISO 8601 date-time", f.name)
			}
			*f.dst = &t
		}
	}
	return d, nil
}

// listQuery reads what every Runtime list takes: the page, the date range
// and the tag filter.
func listQuery(r *http.Request) (query, store.Page, store.DateRange, map[string][]string, error) {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return q, p, store.DateRange{}, nil, err
	}
	d, err := dateRange(q)
	if err != nil {
		return q, p, d, nil, err
	}
	tags, err := q.tags()
	return q, p, d, tags, err
}

// sortQuery reads sortField (or rangeField, which names the date the range
// applies to; they must agree) and sortDirection.
func sortQuery(q query) (field string, desc bool, err error) {
	field, err = q.enum("sortField", "createdAt", "updatedAt")
	if err != nil {
		return "", false, err
	}
	rf, err := q.enum("rangeField", "createdAt", "updatedAt")
	if err != nil {
		return "", false, err
	}
	if rf != "" && field != "" && rf != field {
		return "", false, platform.Errorf(platform.TypeInvalidQuery, "rangeField: must be the sortField when both are given")
	}
	if field == "" {
		field = rf
	}
	dir, err := q.enum("sortDirection", "asc", "desc")
	return field, dir == "desc", err
}

func (a *api) rtListUsers(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q, p, d, tags, err := listQuery(r)
	if err != nil {
		return err
	}
	field, desc, err := sortQuery(q)
	if err != nil {
		return err
	}
	users, next, err := a.RuntimeAPI.ListUsers(r.Context(), c.BotID, runtimeapi.UserFilter{Page: p, DateRange: d,
		ConversationID: q.str("conversationId"), Tags: tags, SortField: field, Descending: desc})
	if err != nil {
		return err
	}
	writeList(w, "users", users, next, runtimeapi.UserJSON)
	return nil
}

func (a *api) rtListConversations(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q, p, d, tags, err := listQuery(r)
	if err != nil {
		return err
	}
	field, desc, err := sortQuery(q)
	if err != nil {
		return err
	}
	f := runtimeapi.ConversationFilter{Page: p, DateRange: d, Tags: tags, ParticipantIDs: q.list("participantIds"),
		Channel: q.str("channel"), Integration: q.str("integrationName"), SortField: field, Descending: desc}
	for _, n := range []struct {
		name string
		dst  **int64
	}{{"minMessageCount", &f.MinMessages}, {"maxMessageCount", &f.MaxMessages}} {
		v, err := q.integer(n.name)
		if err != nil {
			return err
		}
		if v != nil {
			x := int64(*v)
			*n.dst = &x
		}
	}
	convs, next, err := a.RuntimeAPI.ListConversations(r.Context(), c.BotID, f)
	if err != nil {
		return err
	}
	writeList(w, "conversations", convs, next, conversationJSON)
	return nil
}

func (a *api) rtAddParticipant(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct {
		UserID string `json:"userId"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := a.RuntimeAPI.AddParticipant(r.Context(), c.BotID, r.PathValue("id"), in.UserID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"participant": runtimeapi.UserJSON(u)})
	return nil
}

func (a *api) rtGetParticipant(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	u, err := a.RuntimeAPI.Participant(r.Context(), c.BotID, r.PathValue("id"), r.PathValue("userId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"participant": runtimeapi.UserJSON(u)})
	return nil
}

func (a *api) rtRemoveParticipant(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	if err := a.RuntimeAPI.RemoveParticipant(r.Context(), c.BotID, r.PathValue("id"), r.PathValue("userId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (a *api) rtListParticipants(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	p, err := page(newQuery(r), 20)
	if err != nil {
		return err
	}
	users, next, err := a.RuntimeAPI.ListParticipants(r.Context(), c.BotID, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	writeList(w, "participants", users, next, runtimeapi.UserJSON)
	return nil
}

func (a *api) rtImportMessages(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct {
		Messages []runtimeapi.MessageInput `json:"messages"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	ms, err := a.RuntimeAPI.ImportMessages(r.Context(), c.BotID, in.Messages)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = runtimeapi.MessageJSON(m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out})
	return nil
}

func (a *api) rtListMessages(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q, p, d, tags, err := listQuery(r)
	if err != nil {
		return err
	}
	ms, next, err := a.RuntimeAPI.ListMessages(r.Context(), c.BotID, runtimeapi.MessageFilter{Page: p, DateRange: d,
		ConversationID: q.str("conversationId"), Tags: tags})
	if err != nil {
		return err
	}
	writeList(w, "messages", ms, next, runtimeapi.MessageJSON)
	return nil
}

func (a *api) rtListTagValues(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	kind, err := q.enum("type", store.TagKindUser, store.TagKindConversation, store.TagKindMessage)
	if err != nil {
		return err
	}
	if kind == "" {
		return platform.Errorf(platform.TypeInvalidQuery, "type: is required (user, conversation or message)")
	}
	vals, next, err := a.RuntimeAPI.ListTagValues(r.Context(), c.BotID, kind, r.PathValue("key"), p)
	if err != nil {
		return err
	}
	writeList(w, "tags", vals, next, func(v string) map[string]any { return map[string]any{"value": v} })
	return nil
}
