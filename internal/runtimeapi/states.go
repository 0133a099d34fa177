package runtimeapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
)

// State types of the Runtime API. A state of a user or conversation is
// removed with it; a bot's is found by the bot's own id; a workflow's,
// task's or integration's by any id the bot chooses.
var stateTypes = map[string]bool{"conversation": true, "user": true, "bot": true, "integration": true, "workflow": true, "task": true}

// Limits of states.
const (
	MaxStateName   = 200
	MaxStateExpiry = 30 * 24 * time.Hour
	patchAttempts  = 10
)

// StateKey names a state: its type, the id of what it belongs to, its name.
type StateKey struct{ Type, ID, Name string }

// StateInput is the body of setState, getOrSetState and patchState. Expiry
// is absent (the declared expiry, else the state's current one), null (none)
// or milliseconds.
type StateInput struct {
	Payload json.RawMessage `json:"payload"`
	Expiry  json.RawMessage `json:"expiry"`
}

// StateView is a state with the ids the bot sees.
type StateView struct {
	platform.RuntimeState
	ScopeFID string
}

// StateJSON renders a state as the Runtime API returns it.
func StateJSON(st StateView) map[string]any {
	out := map[string]any{
		"id": st.ID, "createdAt": platform.FormatTime(st.CreatedAt), "updatedAt": platform.FormatTime(st.UpdatedAt),
		"botId": st.BotID, "name": st.Name, "type": st.Type, "payload": rawObject(st.Payload),
	}
	switch st.Type {
	case "conversation":
		out["conversationId"] = st.ScopeFID
	case "user":
		out["userId"] = st.ScopeFID
	}
	if st.Expiry != nil {
		out["expiry"] = *st.Expiry
	}
	if st.ExpiresAt != nil {
		out["expiresAt"] = platform.FormatTime(*st.ExpiresAt)
	}
	return out
}

// declared is what a bot's definition says of a state (updateBot's states).
type declared struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
	Expiry *float64        `json:"expiry"`
}

// stateScope checks a state key and resolves what the state belongs to:
// its internal id and the id the bot sees.
func (s *Service) stateScope(ctx context.Context, botID string, k StateKey) (scopeID, fid string, err error) {
	if !stateTypes[k.Type] {
		return "", "", platform.Invalid("type", "must be one of conversation, user, bot, integration, workflow, task (got %q)", k.Type)
	}
	if k.Name == "" || len(k.Name) > MaxStateName {
		return "", "", platform.Invalid("name", "must have 1 to %d characters", MaxStateName)
	}
	switch k.Type {
	case "conversation":
		c, err := s.Conversation(ctx, botID, k.ID)
		return c.ID, c.FID, err
	case "user":
		u, err := s.User(ctx, botID, k.ID)
		return u.ID, u.FID, err
	case "bot":
		if k.ID != botID {
			return "", "", platform.NotFound("bot", k.ID)
		}
	}
	if k.ID == "" {
		return "", "", platform.Invalid("id", "is required")
	}
	return k.ID, k.ID, nil
}

// declaration returns the bot's declaration of a state, if any; a state
// declared for another type is refused.
func (s *Service) declaration(ctx context.Context, botID, workspaceID string, k StateKey) (*declared, error) {
	b, err := s.store.GetBot(ctx, workspaceID, botID)
	if err != nil {
		return nil, notFound(err, "bot", botID)
	}
	if len(b.Spec.States) == 0 {
		return nil, nil
	}
	var all map[string]declared
	if err := json.Unmarshal(b.Spec.States, &all); err != nil {
		return nil, err
	}
	d, ok := all[k.Name]
	if !ok {
		return nil, nil
	}
	if d.Type != "" && d.Type != k.Type {
		return nil, platform.Invalid("type", "state %q is declared by the bot for type %s, not %s", k.Name, d.Type, k.Type)
	}
	return &d, nil
}

// schemas caches the compiled schemas of declared states by their source.
var schemas sync.Map // [32]byte -> *jsonschema.Schema

// checkPayload validates a state's payload against its declared schema.
func checkPayload(name string, d *declared, payload json.RawMessage) error {
	if d == nil || len(d.Schema) == 0 || string(d.Schema) == "null" {
		return nil
	}
	key := sha256.Sum256(d.Schema)
	var sch *jsonschema.Schema
	if v, ok := schemas.Load(key); ok {
		sch = v.(*jsonschema.Schema)
	} else {
		var err error
		if sch, err = jsonbody.CompileUser("state-"+name+".json", d.Schema); err != nil {
			return platform.Errorf(platform.TypeInvalidJSONSchema, "the bot's schema of state %q is not a valid JSON Schema: %v", name, err)
		}
		schemas.Store(key, sch)
	}
	if err := jsonbody.Check(payload, sch); err != nil {
		var e *platform.Error
		if errors.As(err, &e) && e.Type == platform.TypeInvalidPayload {
			return platform.Invalid("payload", "does not match the schema of state %q: %s", name, strings.TrimPrefix(e.Message, ": "))
		}
		return err
	}
	return nil
}

// expiry works out a write's expiry: the one given (null: none), else the
// declared one, else the current state's.
func expiry(raw json.RawMessage, d *declared, current *platform.RuntimeState) (*int64, error) {
	switch {
	case string(raw) == "null":
		return nil, nil
	case len(raw) > 0:
		var ms float64
		if err := json.Unmarshal(raw, &ms); err != nil || ms < 1 || ms > float64(MaxStateExpiry.Milliseconds()) {
			return nil, platform.Invalid("expiry", "must be null or a number of milliseconds from 1 to %d", MaxStateExpiry.Milliseconds())
		}
		v := int64(ms)
		return &v, nil
	case d != nil && d.Expiry != nil:
		v := int64(*d.Expiry)
		return &v, nil
	case current != nil:
		return current.Expiry, nil
	}
	return nil, nil
}

func (s *Service) dated(st *platform.RuntimeState, now time.Time) {
	st.UpdatedAt = now
	st.ExpiresAt = nil
	if st.Expiry != nil {
		t := now.Add(time.Duration(*st.Expiry) * time.Millisecond)
		st.ExpiresAt = &t
	}
}

// GetState returns a state that has not lapsed.
func (s *Service) GetState(ctx context.Context, botID string, k StateKey) (StateView, error) {
	scope, fid, err := s.stateScope(ctx, botID, k)
	if err != nil {
		return StateView{}, err
	}
	st, err := s.store.GetRuntimeState(ctx, botID, k.Type, scope, k.Name, s.clock.Now())
	return StateView{st, fid}, notFound(err, "state", k.Name)
}

// SetState creates or replaces a state; a null payload deletes it.
func (s *Service) SetState(ctx context.Context, botID, workspaceID string, k StateKey, in StateInput) (StateView, error) {
	v, _, err := s.put(ctx, botID, workspaceID, k, in, false)
	return v, err
}

// GetOrSetState returns the state, or sets it when it is absent or lapsed;
// created reports which.
func (s *Service) GetOrSetState(ctx context.Context, botID, workspaceID string, k StateKey, in StateInput) (StateView, bool, error) {
	return s.put(ctx, botID, workspaceID, k, in, true)
}

// put writes a state and reports whether it is a new one.
func (s *Service) put(ctx context.Context, botID, workspaceID string, k StateKey, in StateInput, onlyIfAbsent bool) (StateView, bool, error) {
	scope, fid, err := s.stateScope(ctx, botID, k)
	if err != nil {
		return StateView{}, false, err
	}
	if string(in.Payload) == "null" && !onlyIfAbsent {
		err := s.store.DeleteRuntimeState(ctx, botID, k.Type, scope, k.Name)
		if errors.Is(err, platform.ErrNotFound) {
			err = nil
		}
		return StateView{RuntimeState: platform.RuntimeState{BotID: botID, Type: k.Type, Name: k.Name, Payload: json.RawMessage(`{}`)}, ScopeFID: fid}, false, err
	}
	d, err := s.declaration(ctx, botID, workspaceID, k)
	if err != nil {
		return StateView{}, false, err
	}
	if err := checkPayload(k.Name, d, in.Payload); err != nil {
		return StateView{}, false, err
	}
	var current *platform.RuntimeState
	if len(in.Expiry) == 0 && (d == nil || d.Expiry == nil) {
		if cur, err := s.store.GetRuntimeState(ctx, botID, k.Type, scope, k.Name, s.clock.Now()); err == nil {
			current = &cur
		}
	}
	exp, err := expiry(in.Expiry, d, current)
	if err != nil {
		return StateView{}, false, err
	}
	now := s.clock.Now()
	st := platform.RuntimeState{ID: platform.NewID("state_"), BotID: botID, Type: k.Type, ScopeID: scope, Name: k.Name,
		Payload: in.Payload, Expiry: exp, CreatedAt: now}
	s.dated(&st, now)
	stored, err := s.store.PutRuntimeState(ctx, st, onlyIfAbsent)
	return StateView{stored, fid}, stored.ID == st.ID, notFound(err, k.Type, k.ID)
}

// PatchState merges the payload's top-level keys into the state's (a null
// value removes a key).
func (s *Service) PatchState(ctx context.Context, botID, workspaceID string, k StateKey, in StateInput) (StateView, error) {
	scope, fid, err := s.stateScope(ctx, botID, k)
	if err != nil {
		return StateView{}, err
	}
	d, err := s.declaration(ctx, botID, workspaceID, k)
	if err != nil {
		return StateView{}, err
	}
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(in.Payload, &patch); err != nil {
		return StateView{}, platform.Invalid("payload", "must be an object")
	}
	return s.rewrite(ctx, botID, k, scope, fid, func(st *platform.RuntimeState) error {
		var cur map[string]json.RawMessage
		if err := json.Unmarshal(st.Payload, &cur); err != nil || cur == nil {
			cur = map[string]json.RawMessage{}
		}
		for key, v := range patch {
			if string(v) == "null" {
				delete(cur, key)
			} else {
				cur[key] = v
			}
		}
		st.Payload, _ = json.Marshal(cur)
		if err := checkPayload(k.Name, d, st.Payload); err != nil {
			return err
		}
		var err error
		st.Expiry, err = expiry(in.Expiry, d, st)
		return err
	})
}

// rewrite reads a state, changes it with f and writes it over the version it
// read, reading again when another write came first.
func (s *Service) rewrite(ctx context.Context, botID string, k StateKey, scope, fid string, f func(st *platform.RuntimeState) error) (StateView, error) {
	for range patchAttempts {
		st, err := s.store.GetRuntimeState(ctx, botID, k.Type, scope, k.Name, s.clock.Now())
		if err != nil {
			return StateView{}, notFound(err, "state", k.Name)
		}
		if err := f(&st); err != nil {
			return StateView{}, err
		}
		s.dated(&st, s.clock.Now())
		err = s.store.UpdateRuntimeState(ctx, st)
		if err == nil {
			st.Version++
			return StateView{st, fid}, nil
		}
		if !errors.Is(err, platform.ErrConflict) {
			return StateView{}, err
		}
	}
	return StateView{}, platform.Errorf(platform.TypeResourceLocked, "state %q is being written by others; try again", k.Name)
}

// SetStateExpiry changes a state's expiry (null: none), counting from now.
func (s *Service) SetStateExpiry(ctx context.Context, botID string, k StateKey, raw json.RawMessage) (StateView, error) {
	if len(raw) == 0 {
		return StateView{}, platform.Invalid("expiry", "is required (null for none)")
	}
	scope, fid, err := s.stateScope(ctx, botID, k)
	if err != nil {
		return StateView{}, err
	}
	return s.rewrite(ctx, botID, k, scope, fid, func(st *platform.RuntimeState) error {
		var err error
		st.Expiry, err = expiry(raw, nil, st)
		return err
	})
}

// expireBatch is how many lapsed states one ExpireStates call takes on.
const expireBatch = 100

// ExpireStates removes the states lapsed at now and queues, with each, the
// state_expired event the bot's handlers receive ({state}). It returns how
// many it expired; several processes may run it at once.
func (s *Service) ExpireStates(ctx context.Context, now time.Time) (int, error) {
	lapsed, err := s.store.LapsedRuntimeStates(ctx, now, expireBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range lapsed {
		v := StateView{RuntimeState: st, ScopeFID: st.ScopeID}
		p := platform.BotEventJob{Type: platform.BotEventStateExp, BotID: st.BotID}
		subject := platform.JobSubjectBot(st.BotID)
		switch st.Type {
		case "conversation":
			v.ScopeFID, _ = s.visibleIDs(ctx, st.BotID, st.ScopeID, "")
			p.ConversationID, subject = st.ScopeID, st.ScopeID
		case "user":
			_, v.ScopeFID = s.visibleIDs(ctx, st.BotID, "", st.ScopeID)
			p.UserID = st.ScopeID
		}
		p.Payload, _ = json.Marshal(map[string]any{"state": StateJSON(v)})
		payload, _ := json.Marshal(p)
		id := fmt.Sprintf("job_stexp_%s_%d", st.ID, st.Version)
		ok, err := s.store.ExpireRuntimeState(ctx, st, now, platform.Job{ID: id, Kind: platform.JobBotEvent, Subject: subject,
			Payload: payload, RunAfter: now, CreatedAt: now})
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}
