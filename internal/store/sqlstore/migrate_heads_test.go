package sqlstore_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/botplatform/botplatform/internal/store/postgres"
	"github.com/botplatform/botplatform/internal/store/sqlite"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestJobHeadsMigration: jobs queued before migration 0011 (which added the
// head marks) are marked by it: the first unfinished job of each subject of
// each kind, in (run_after, id) order, whatever its status; none of a
// subject whose jobs are all done.
func TestJobHeadsMigration(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			db, d, full := migratedTo(t, backend, 10)
			insert := `INSERT INTO jobs (id, kind, subject, payload, status, attempts, run_after, created_at) VALUES (?, ?, ?, '{}', ?, 0, ?, 0)`
			if d.Numbered {
				insert = numbered(insert)
			}
			for _, j := range []struct {
				id, kind, subject, status string
				runAfter                  int64
			}{
				{"job_d1", "a", "s1", "done", 1}, {"job_p1", "a", "s1", "pending", 2}, {"job_p2", "a", "s1", "pending", 3},
				{"job_r1", "a", "s2", "running", 5}, {"job_p3", "a", "s2", "pending", 4}, // queued before the running one
				{"job_d2", "a", "s3", "done", 1},
				{"job_p4", "b", "s1", "pending", 9},                                      // another kind, same subject
				{"job_tb", "a", "s5", "pending", 7}, {"job_ta", "a", "s5", "pending", 7}, // same time: by id
				{"job_r2", "a", "s6", "running", 1}, {"job_p5", "a", "s6", "pending", 2},
			} {
				if _, err := db.ExecContext(ctx, insert, j.id, j.kind, j.subject, j.status, j.runAfter); err != nil {
					t.Fatalf("queueing %s: %v", j.id, err)
				}
			}
			d.Migrations = full
			applied, err := sqlstore.New(db, db, d).Migrate(ctx)
			if err != nil || !slices.Contains(applied, "0011_job_heads.sql") {
				t.Fatalf("migrating on: applied %v, %v", applied, err)
			}
			rows, err := db.QueryContext(ctx, `SELECT id FROM jobs WHERE head = 1 ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var heads []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				heads = append(heads, id)
			}
			if want := []string{"job_p1", "job_p3", "job_p4", "job_r2", "job_ta"}; !slices.Equal(heads, want) {
				t.Fatalf("heads after migration 0011: %v, want %v", heads, want)
			}
		})
	}
}

// migratedTo opens a new database of backend on one connection, migrated up
// to migration last, and returns it with its dialect and all of the
// dialect's migrations.
func migratedTo(t *testing.T, backend string, last int) (*sql.DB, sqlstore.Dialect, fs.FS) {
	t.Helper()
	var db *sql.DB
	var d sqlstore.Dialect
	var err error
	switch backend {
	case "sqlite":
		db, err = sql.Open("sqlite", filepath.Join(t.TempDir(), "migrate.db"))
		d = sqlite.Dialect()
	case "postgres":
		db, err = sql.Open("pgx", storetest.PostgresURL(t))
		d = postgres.Dialect()
	}
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	full := d.Migrations
	d.Migrations = migrationsUpTo(t, full, last)
	if _, err := sqlstore.New(db, db, d).Migrate(context.Background()); err != nil {
		t.Fatalf("migrating to %04d: %v", last, err)
	}
	return db, d, full
}

// migrationsUpTo is the migrations numbered up to last.
func migrationsUpTo(t *testing.T, all fs.FS, last int) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	entries, err := fs.ReadDir(all, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil || n > last {
			continue
		}
		b, err := fs.ReadFile(all, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = &fstest.MapFile{Data: b}
	}
	return out
}

// numbered turns ? placeholders into PostgreSQL's $1, $2, ….
func numbered(q string) string {
	for i := 1; strings.Contains(q, "?"); i++ {
		q = strings.Replace(q, "?", "$"+strconv.Itoa(i), 1)
	}
	return q
}
