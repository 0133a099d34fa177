package blob

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
)

// Identity names a Store: the random id kept in the store itself, and where
// the store was when its database first recorded it.
type Identity struct {
	ID    string `json:"id"`
	Where string `json:"where"`
}

// Recorder is the database's side of Attach: it keeps the first value it
// is given and returns the kept one (store.Store's Secret does this).
type Recorder func(ctx context.Context, value []byte) ([]byte, error)

// ForeignError means a Store is not the one its database recorded: the
// database's content would be missing from it.
type ForeignError struct {
	Store Identity // the store being attached; Where as given to Attach
	Known Identity // the store the database recorded
	Fresh bool     // the store had no id before this Attach
}

func (e *ForeignError) Error() string {
	what := fmt.Sprintf("storage id %s", e.Store.ID)
	if e.Fresh {
		what = "new, no storage id before this start"
	}
	return fmt.Sprintf("file storage %s (%s) is not the file storage of this database (storage id %s, first used at %s)",
		e.Store.Where, what, e.Known.ID, e.Known.Where)
}

// Attach ties s, found at where, to a database, so that no process serves
// a database's files from storage that does not hold them (every content
// would answer 404). The first Store attached to a database is recorded
// by record; any other is refused with a *ForeignError, unless adopt is
// set: s then takes the recorded id and is the database's from now on.
func Attach(ctx context.Context, s Store, where string, record Recorder, adopt bool) error {
	proposal := rand.Text()
	mine, err := s.ID(ctx, proposal)
	if err != nil {
		return fmt.Errorf("blob: storage id of %s: %w", where, err)
	}
	value, _ := json.Marshal(Identity{ID: mine, Where: where})
	got, err := record(ctx, value)
	if err != nil {
		return fmt.Errorf("blob: recording the storage id: %w", err)
	}
	var known Identity
	if err := json.Unmarshal(got, &known); err != nil || known.ID == "" {
		return fmt.Errorf("blob: the database's record of its file storage is unreadable: %q", got)
	}
	switch {
	case known.ID == mine:
		return nil
	case adopt:
		if err := s.SetID(ctx, known.ID); err != nil {
			return fmt.Errorf("blob: storage id of %s: %w", where, err)
		}
		return nil
	}
	return &ForeignError{Store: Identity{ID: mine, Where: where}, Known: known, Fresh: mine == proposal}
}
