// Package privacy exports and erases everything the server stores about one chat user of a bot.
package privacy

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// FileTag is the file tag that links a file to a chat user: a file tagged
// userId = the user's id (as clients see it, or the internal one) is
// theirs, as is a file created with the Files API header x-user-id naming
// them (its owner).
const FileTag = "userId"

// minMention is the length from which a user's id found in free text (a log
// line, an event's payload) makes it theirs: a shorter id ("bob") would also
// be found inside other people's text.
const minMention = 8

// Store is what the service needs of the database.
type Store interface {
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
	GetChatUser(ctx context.Context, botID, id string) (platform.ChatUser, error)
	PersonData(ctx context.Context, p store.Person) (store.PersonData, error)
	ErasePerson(ctx context.Context, p store.Person) (store.PersonData, []string, error)
}

// ContentRemover deletes stored file content (the blob store).
type ContentRemover interface {
	Delete(ctx context.Context, key string) error
}

// Streams ends a chat user's open signal streams (chat.Hub).
type Streams interface {
	CloseUser(userID string)
}

// Service exports and erases people's data.
type Service struct {
	store   Store
	content ContentRemover
	streams Streams
	clock   platform.Clock
	log     *slog.Logger
}

// New returns a Service.
func New(st Store, content ContentRemover, streams Streams, clock platform.Clock, log *slog.Logger) *Service {
	return &Service{store: st, content: content, streams: streams, clock: clock, log: log}
}

// person finds the chat user userID (as clients see it, or internal) of a
// bot of the caller's workspace, and what selects their data. Only
// administrators and owners may read or erase it.
func (s *Service) person(ctx context.Context, act *platform.Actor, botID, userID, action string) (store.Person, error) {
	if err := act.Require(platform.RoleAdministrator, action); err != nil {
		return store.Person{}, err
	}
	if _, err := s.store.GetBot(ctx, act.Member.WorkspaceID, botID); err != nil {
		return store.Person{}, notFound(err, "bot", botID)
	}
	u, err := s.store.GetChatUser(ctx, botID, userID)
	if err == nil && u.ID == botID {
		err = platform.ErrNotFound // the user the bot speaks as is the bot's
	}
	if err != nil {
		return store.Person{}, notFound(err, "user", userID)
	}
	p := store.Person{BotID: botID, UserID: u.ID, FileTag: FileTag, Aliases: []string{u.ID}}
	if u.FID != u.ID {
		p.Aliases = append(p.Aliases, u.FID)
	}
	for _, a := range p.Aliases {
		if len(a) >= minMention {
			p.Mentions = append(p.Mentions, a)
		}
	}
	return p, nil
}

func notFound(err error, kind, id string) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound(kind, id)
	}
	return err
}

// Export returns everything stored about a chat user of a bot.
func (s *Service) Export(ctx context.Context, act *platform.Actor, botID, userID string) (Export, error) {
	p, err := s.person(ctx, act, botID, userID, "exporting a user's data")
	if err != nil {
		return Export{}, err
	}
	d, err := s.store.PersonData(ctx, p)
	if err != nil {
		return Export{}, err
	}
	return exportOf(p, d, s.clock.Now()), nil
}

// Erasure counts what an erase deleted.
type Erasure struct {
	Conversations int `json:"conversations"` // owned, each with all its messages and events
	Messages      int `json:"messages"`
	ChatEvents    int `json:"chatEvents"`
	States        int `json:"states"`
	Workflows     int `json:"workflows"`
	Events        int `json:"events"`
	Files         int `json:"files"`
	Logs          int `json:"logs"`
}

// Erase deletes everything stored about a chat user of a bot (what Export
// shows, and the messages and events of other people in the conversations
// the user owns), then the deleted files' content, and ends their streams.
func (s *Service) Erase(ctx context.Context, act *platform.Actor, botID, userID string) (Erasure, error) {
	p, err := s.person(ctx, act, botID, userID, "erasing a user's data")
	if err != nil {
		return Erasure{}, err
	}
	d, blobs, err := s.store.ErasePerson(erased(ctx, s.clock, act, botID), p)
	if err != nil {
		return Erasure{}, err
	}
	for _, k := range blobs {
		// Unreachable now in any case; the files reaper removes content no
		// file refers to, should this fail.
		_ = s.content.Delete(ctx, k)
	}
	s.streams.CloseUser(p.UserID)
	n := Erasure{Conversations: len(d.Owned), Messages: len(d.Messages), ChatEvents: len(d.ChatEvents),
		States: len(d.States) + len(d.CodeStates), Workflows: len(d.Workflows), Events: len(d.Events), Files: len(d.Files), Logs: len(d.Logs)}
	s.userErased(ctx, act, botID, n)
	return n, nil
}

// erased returns ctx carrying the audit record of the erase, which commits
// with it. The record names the bot, never the user: it outlives them.
func erased(ctx context.Context, clock platform.Clock, act *platform.Actor, botID string) context.Context {
	return audit.With(ctx, clock, audit.Record{WorkspaceID: act.Member.WorkspaceID, Actor: audit.Account(act.Account),
		Action: audit.UserErased, ResourceID: botID, Value: "a chat user of the bot, with everything stored about them"})
}

func (s *Service) userErased(ctx context.Context, act *platform.Actor, botID string, n Erasure) {
	s.log.InfoContext(ctx, "user erased", "workspace", act.Member.WorkspaceID, "bot", botID, "by", act.Account.ID,
		"conversations", n.Conversations, "messages", n.Messages, "files", n.Files, "logs", n.Logs)
}

// visible returns what clients see of an internal id in d: a user's or a
// conversation's id as they know it.
func visible(d store.PersonData) func(string) string {
	ids := map[string]string{d.User.ID: d.User.FID}
	for _, c := range slices.Concat(d.Owned, d.Joined) {
		ids[c.ID] = c.FID
	}
	return func(id string) string {
		if v, ok := ids[id]; ok {
			return v
		}
		return id
	}
}
