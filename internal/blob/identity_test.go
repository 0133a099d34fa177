package blob_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/botplatform/botplatform/internal/blob"
)

// TestFSID: of first ID calls at once through several FS on one directory,
// all return the id one of them stored; SetID replaces the file.
func TestFSID(t *testing.T) {
	ctx := context.Background()
	s, dir := newFS(t)
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			other, err := blob.NewFS(dir)
			if err == nil {
				ids[i], err = other.ID(ctx, "id-"+string(rune('a'+i)))
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !strings.HasPrefix(id, "id-") {
			t.Fatalf("concurrent first IDs: %q, want one id for all", ids)
		}
	}
	// SetID writes the file (the conformance suite checks what ID reads).
	if err := s.SetID(ctx, "replaced"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "store-id")); err != nil || string(b) != "replaced\n" {
		t.Fatalf("store-id file: %q %v", b, err)
	}
	assertTmpEmpty(t, dir)
}

// memRecorder is a database's side of Attach: it keeps the first value.
type memRecorder struct {
	mu    sync.Mutex
	value []byte
}

func (m *memRecorder) record(_ context.Context, v []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.value == nil {
		m.value = v
	}
	return m.value, nil
}

func TestAttach(t *testing.T) {
	ctx := context.Background()
	db := &memRecorder{}
	a, dirA := newFS(t)
	b, dirB := newFS(t)
	// The first store attached is the database's; attaching it again works.
	for range 2 {
		if err := blob.Attach(ctx, a, dirA, db.record, false); err != nil {
			t.Fatalf("attach the database's store: %v", err)
		}
	}
	var known blob.Identity
	if err := json.Unmarshal(db.value, &known); err != nil || known.Where != dirA || known.ID == "" {
		t.Fatalf("recorded %s, %v", db.value, err)
	}
	// Another store, new or not, is refused, naming both.
	for _, fresh := range []bool{true, false} {
		err := blob.Attach(ctx, b, dirB, db.record, false)
		var fe *blob.ForeignError
		if !errors.As(err, &fe) || fe.Fresh != fresh || fe.Known != known || fe.Store.Where != dirB {
			t.Fatalf("attach another store (fresh %v): %#v", fresh, err)
		}
		if msg := err.Error(); !strings.Contains(msg, dirA) || !strings.Contains(msg, dirB) || !strings.Contains(msg, known.ID) {
			t.Errorf("error %q does not name both stores", msg)
		}
	}
	// Adopting it gives it the database's id: it is accepted from then on,
	// and so is the first one.
	if err := blob.Attach(ctx, b, dirB, db.record, true); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	for dir, s := range map[string]*blob.FS{dirA: a, dirB: b} {
		if err := blob.Attach(ctx, s, dir, db.record, false); err != nil {
			t.Errorf("attach %s after adopting: %v", dir, err)
		}
	}
	// A database that fails or holds garbage stops the attach.
	boom := errors.New("boom")
	if err := blob.Attach(ctx, a, dirA, func(context.Context, []byte) ([]byte, error) { return nil, boom }, false); !errors.Is(err, boom) {
		t.Errorf("failing recorder: %v", err)
	}
	if err := blob.Attach(ctx, a, dirA, func(context.Context, []byte) ([]byte, error) { return []byte("x"), nil }, false); err == nil {
		t.Error("unreadable record accepted")
	}
}
