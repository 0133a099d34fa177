package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlite"
)

// TestCheckpointInBackground: what the writer commits reaches the database
// file without a commit paying for the checkpoint. A few writes stay far
// under SQLite's own threshold (1,000 pages); the database file alone (a
// copy without its log) holds them once the checkpointer has run.
func TestCheckpointInBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "botplatform.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := platform.Account{ID: platform.NewID("acc_"), Email: "checkpoint@example.com", DisplayName: "c", CreatedAt: time.Now()}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard: it takes a tenth of a second
	for n := 0; ; n++ {
		if inFileAlone(t, path, filepath.Join(t.TempDir(), "copy.db"), a.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the account is not in the database file after %d looks: no checkpoint ran", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The store keeps working, and closes with its checkpointer.
	if _, err := s.GetAccount(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// inFileAlone copies the database file (not its log) to copyPath and tells
// whether the copy holds account id. A copy taken while a checkpoint writes
// may be torn: that is a no.
func inFileAlone(t *testing.T, path, copyPath, id string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+copyPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM accounts WHERE id = ?`, id).Scan(&n); err != nil {
		return false
	}
	return n == 1
}
