package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/chat"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Fuzz targets of the request decoders: every body schema, the chat
// payload validator (messages from bot code) and the query-string parsers.
// Each asserts that bad input ends in a *platform.Error of a 4xx type,
// never a panic or a hang; seeds are in testdata/fuzz/<FuzzName>/.

// bodies are the request bodies decode reads, each with its schema and
// the type its handler decodes into.
var bodies = []struct {
	name string
	sch  *jsonbody.Schema
	dst  func() any
}{
	{"empty", emptyBodySchema, func() any { return &struct{}{} }},
	{"note", createPATSchema, func() any { return &struct{ Note string }{} }},
	{"createWorkspace", createWorkspaceSchema, func() any { return &struct{ Name, BillingVersion string }{} }},
	{"updateWorkspace", updateWorkspaceSchema, func() any { return &admin.WorkspaceUpdate{} }},
	{"addMember", addMemberSchema, func() any {
		return &struct {
			Email string
			Role  platform.Role
		}{}
	}},
	{"updateMember", updateMemberSchema, func() any { return &struct{ Role *platform.Role }{} }},
	{"createBot", createBotSchema, func() any { return &admin.BotInput{} }},
	{"updateBot", updateBotSchema, func() any { return &admin.BotInput{} }},
	{"createBotKey", createBotKeySchema, func() any { return &struct{ BotID, Note string }{} }},
	{"createUser", createUserSchema, func() any { return &chat.UserInput{} }},
	{"updateUser", updateUserSchema, func() any { return &chat.UserInput{} }},
	{"conversation", createConversationSchema, func() any { return &struct{ ID *string }{} }},
	{"conversationID", getOrCreateConversationSchema, func() any { return &struct{ ID *string }{} }},
	{"participant", addParticipantSchema, func() any { return &struct{ UserID string }{} }},
	{"message", chat.MessageSchema, func() any { return &chat.MessageInput{} }},
	{"event", createEventSchema, func() any {
		return &struct {
			Payload        json.RawMessage
			ConversationID string
		}{}
	}},
	{"upsertFile", upsertFileSchema, func() any { return &files.UpsertInput{} }},
	{"updateFile", updateFileSchema, func() any { return &files.MetadataUpdate{} }},
	{"copyFile", copyFileSchema, func() any { return &struct{ Overwrite bool }{} }},
	{"createKB", createKBSchema, func() any { return &kbBody{} }},
	{"updateKB", updateKBSchema, func() any { return &kbBody{} }},
	{"changeAISpend", changeAISpendSchema, func() any { return &struct{ MonthlySpendingLimit int64 }{} }},
	{"createBotVersion", createBotVersionSchema, func() any { return &struct{ Name, Description string }{} }},
	{"deployBotVersion", deployBotVersionSchema, func() any { return &struct{ VersionID string }{} }},
	{"setQuotas", setQuotasSchema, func() any { return &map[string]*int64{} }},
	{"callAction", callActionSchema, func() any {
		return &struct {
			Type  string          `json:"type"`
			Input json.RawMessage `json:"input"`
		}{}
	}},
	{"setPassages", setPassagesSchema, func() any {
		return &struct {
			Passages []platform.OwnPassage `json:"passages"`
		}{}
	}},
}

// clientError fails unless err is nil or a *platform.Error of one of the
// given types (any 4xx type when none is given).
func clientError(t *testing.T, what string, err error, types ...platform.ErrorType) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *platform.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s: %T %v, want a *platform.Error", what, err, err)
	}
	if s := pe.Type.Status(); s < 400 || s > 499 || len(types) > 0 && !slices.Contains(types, pe.Type) {
		t.Fatalf("%s: %s (%d) %q, want one of %v", what, pe.Type, s, pe.Message, types)
	}
}

// hangGuard fails when f takes longer than a generous bound: a parser
// that loops on some input.
func hangGuard(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("%s: took %v", what, d)
	}
}

func decodeBody(sch *jsonbody.Schema, body []byte, dst any) error {
	r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
	return decodeWith(r, sch, dst)
}

// reencode reads an accepted body as the validator does (numbers kept
// as written) and writes it again, compact.
func reencode(t *testing.T, body []byte) []byte {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("accepted a body that is not JSON: %v", err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("re-encoding %q: %v", body, err)
	}
	return again
}

// FuzzDecodeBody: the body goes to the schema the first byte picks; the
// result is nil or a 400 InvalidPayload, and a body accepted is accepted
// again once re-encoded.
func FuzzDecodeBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		b := bodies[int(which)%len(bodies)]
		var err error
		hangGuard(t, b.name, func() { err = decodeBody(b.sch, body, b.dst()) })
		clientError(t, b.name, err, platform.TypeInvalidPayload)
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return // an empty body counts as {}
		}
		again := reencode(t, body)
		if err := decodeBody(b.sch, again, b.dst()); err != nil {
			t.Fatalf("%s: %s accepted, %s re-encoded refused: %v", b.name, body, again, err)
		}
	})
}

// FuzzValidateChatMessage: chat's message rule accepts a body exactly
// when createMessage's decoding of the same body does, with a 400
// otherwise; a message accepted is accepted from bot code too, and again
// once re-encoded.
func FuzzValidateChatMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var m chat.MessageInput
		var err error
		hangGuard(t, "DecodeMessage", func() { m, err = chat.DecodeMessage(body) })
		clientError(t, "DecodeMessage", err, platform.TypeInvalidPayload)
		if len(bytes.TrimSpace(body)) == 0 {
			return // createMessage reads an empty body as {}
		}
		viaAPI := decodeBody(chat.MessageSchema, body, &chat.MessageInput{})
		if (err == nil) != (viaAPI == nil) {
			t.Fatalf("chat message %v, createMessage %v", err, viaAPI)
		}
		if err != nil {
			return
		}
		if _, err := chat.CheckMessage(m); err != nil {
			t.Fatalf("%s accepted, the same message from bot code refused: %v", body, err)
		}
		again := reencode(t, body)
		if _, err := chat.DecodeMessage(again); err != nil {
			t.Fatalf("%s accepted, %s re-encoded refused: %v", body, again, err)
		}
	})
}

// FuzzQueryString: the query-string parsers (tag filters in both forms,
// booleans, integers, enums, page size and nextToken) give values or a
// 400 InvalidQuery; a tag filter read from dot notation reads the same
// once written back, and a nextToken read is the token of its cursor.
func FuzzQueryString(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http drops what it cannot parse
		}
		q := query{v}
		in, not, err := q.tagFilter()
		clientError(t, "tagFilter", err, platform.TypeInvalidQuery)
		_, err = q.tags()
		clientError(t, "tags", err, platform.TypeInvalidQuery)
		_, err = q.boolean("indexed")
		clientError(t, "boolean", err, platform.TypeInvalidQuery)
		_, err = q.integer("limit")
		clientError(t, "integer", err, platform.TypeInvalidQuery)
		_, err = q.enum("sortDirection", "asc", "desc")
		clientError(t, "enum", err, platform.TypeInvalidQuery)
		p, err := page(q, 20)
		clientError(t, "page", err, platform.TypeInvalidQuery, platform.TypeInvalidPayload)
		c, err := store.DecodeCursor(p.Token)
		clientError(t, "nextToken", err, platform.TypeInvalidQuery)
		if c != nil {
			if again, err := store.DecodeCursor(c.Encode()); err != nil || *again != *c {
				t.Fatalf("cursor %+v: read back %+v, %v", c, again, err)
			}
		}
		if v.Get("tags") != "" {
			return
		}
		// Dot notation round trip.
		back := url.Values{}
		for k, vals := range in {
			back["tags."+k] = vals
		}
		for k, vals := range not {
			back["tags."+k+".not"] = append(back["tags."+k+".not"], vals...)
		}
		in2, not2, err := query{back}.tagFilter()
		if err != nil || !maps.EqualFunc(in, in2, slices.Equal) || !maps.EqualFunc(not, not2, slices.Equal) {
			t.Fatalf("%q: read %v not %v; written back as %q, read %v not %v (%v)", raw, in, not, back.Encode(), in2, not2, err)
		}
	})
}
