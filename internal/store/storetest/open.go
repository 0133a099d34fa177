// Package storetest opens real databases for tests and holds the store
// conformance suite that every backend must pass.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/store/postgres"
	"github.com/botplatform/botplatform/internal/store/sqlite"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
)

// PostgresEnv names the variable holding the PostgreSQL test database URL.
const PostgresEnv = "BOTPLATFORM_TEST_DATABASE_URL"

// Backends lists the backends to test: sqlite always, postgres when
// BOTPLATFORM_TEST_DATABASE_URL is set.
var Backends = []string{"sqlite", "postgres"}

// Open returns a migrated, empty store of the named backend that is removed
// when the test ends. For postgres without the URL the test is skipped, with
// the reason.
func Open(t testing.TB, backend string) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	switch backend {
	case "sqlite":
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	case "postgres":
		u := PostgresURL(t)
		s, err := postgres.Open(ctx, u, 0)
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Fatalf("unknown backend %q", backend)
	return nil
}

// PostgresURL creates a fresh schema in the test database and returns a URL
// whose connections use it, dropping the schema when the test ends. It skips
// the test when BOTPLATFORM_TEST_DATABASE_URL is not set.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	u, drop, err := NewSchema(base, "t_"+sanitize(t.Name()))
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(drop)
	return u
}

// NewSchema creates a fresh schema, named from prefix and the time, in the
// PostgreSQL database at base, and returns a URL whose connections use it
// and a function that drops it. The reliability tools share it with the
// tests.
func NewSchema(base, prefix string) (schemaURL string, drop func(), err error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("bad database URL: %w", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	name := fmt.Sprintf("%s_%d", strings.ToLower(sanitize(prefix)), time.Now().UnixNano())
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	if _, err := admin.Exec(`CREATE SCHEMA "` + name + `"`); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop = func() {
		db, err := sql.Open("pgx", base)
		if err == nil {
			_, _ = db.Exec(`DROP SCHEMA "` + name + `" CASCADE`)
			db.Close()
		}
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// PostgresDatabaseURL creates a fresh database on the server of the test
// database and returns its URL, dropping it when the test ends: for what a
// schema does not keep apart (LISTEN/NOTIFY wakes every listener of a
// database). It skips the test when BOTPLATFORM_TEST_DATABASE_URL is not set.
func PostgresDatabaseURL(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("bad database URL: %v", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("t_%d", time.Now().UnixNano())
	if _, err := admin.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", base); err == nil {
			_, _ = db.Exec(`DROP DATABASE "` + name + `" WITH (FORCE)`)
			db.Close()
		}
	})
	u.Path = "/" + name
	return u.String()
}

// postgresBase is the test database's URL; without it the test is skipped.
func postgresBase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (for example postgres://postgres@127.0.0.1:5432/test) to run them", PostgresEnv)
	}
	return base
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
