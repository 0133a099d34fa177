package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/postgres"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestAnalyzeAfterIndexing: on PostgreSQL, passages stored in bulk get the
// planner's statistics refreshed by the store itself, without waiting for
// autovacuum (turned off on the tables here, so only the store can do it):
// without them a search straight after a bulk load was planned for empty
// tables and took a second. A small write that follows a large analysis
// does not analyze again.
func TestAnalyzeAfterIndexing(t *testing.T) {
	ctx := context.Background()
	u := storetest.PostgresURL(t)
	sqlstore.AnalyzeSooner(t, time.Second, 100*time.Millisecond)
	s, err := postgres.Open(ctx, u, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"passages", "files"} {
		if _, err := db.Exec(`ALTER TABLE ` + table + ` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	// analyzed is how many times passages were analyzed, and the rows the
	// planner counts in it.
	analyzed := func() (n, rows int64) {
		t.Helper()
		// The statistics collector's figures of this transaction's start:
		// read each time in a transaction of their own.
		if _, err := db.Exec(`SELECT pg_stat_clear_snapshot()`); err != nil {
			t.Fatal(err)
		}
		err := db.QueryRow(`SELECT s.analyze_count, GREATEST(c.reltuples, 0)::bigint FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
			WHERE s.relid = 'passages'::regclass`).Scan(&n, &rows)
		if err != nil {
			t.Fatal(err)
		}
		return n, rows
	}
	waitAnalyzed := func(want int64) int64 {
		t.Helper()
		deadline := time.Now().Add(time.Minute) // a hang guard: it takes about a second
		for {
			n, rows := analyzed()
			if n >= want {
				return rows
			}
			if time.Now().After(deadline) {
				t.Fatalf("passages analyzed %d times, want %d", n, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if n, _ := analyzed(); n != 0 {
		t.Fatalf("passages analyzed %d times before anything was stored", n)
	}
	f := storetest.IndexableFile(t, s)
	ps := make([]platform.Passage, 600)
	for i := range ps {
		ps[i] = storetest.Passage(f, i, fmt.Sprintf("passage %d about returns and refunds", i))
	}
	if err := s.CompleteIndexing(ctx, f.ID, f.Generation, "v2", ps, time.Now()); err != nil {
		t.Fatal(err)
	}
	if rows := waitAnalyzed(1); rows != int64(len(ps)) {
		t.Fatalf("after the analysis the planner counts %d passages, want %d", rows, len(ps))
	}
	firstAt := time.Now()

	// 10 passages more are within 10 % of 600: no analysis for them.
	// Then the file is indexed again with 2,000, which is enough.
	if err := s.CompleteIndexing(ctx, f.ID, f.Generation, "v2", ps[:10], time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past the shortened wait: an analysis would have started
	if n, _ := analyzed(); n != 1 {
		// When, to tell a second analysis from the first one counted late.
		var last, auto sql.NullTime
		var autoN int64
		_ = db.QueryRow(`SELECT last_analyze, last_autoanalyze, autoanalyze_count FROM pg_stat_user_tables WHERE relid = 'passages'::regclass`).Scan(&last, &auto, &autoN)
		t.Fatalf("passages analyzed %d times after a small write, want still 1 (the large write's analysis counted at %s; last analysis %v, last autoanalysis %v, %d autoanalyses)",
			n, firstAt.Format(time.RFC3339Nano), last.Time.Format(time.RFC3339Nano), auto.Time.Format(time.RFC3339Nano), autoN)
	}
	more := make([]platform.Passage, 2000)
	for i := range more {
		more[i] = storetest.Passage(f, i, fmt.Sprintf("passage %d about delivery", i))
	}
	if err := s.CompleteIndexing(ctx, f.ID, f.Generation, "v2", more, time.Now()); err != nil {
		t.Fatal(err)
	}
	if rows := waitAnalyzed(2); rows != int64(len(more)) {
		t.Fatalf("after the second analysis the planner counts %d passages, want %d", rows, len(more))
	}
	if n, _ := analyzed(); n != 2 {
		t.Fatalf("passages analyzed %d times, want 2 (one for each large write)", n)
	}
}

// TestAnalysisCountedWhenItsRowCountFails: an analysis that ran counts the
// rows written before it even when reading the planner's count after it
// fails (a busy server refusing the connection, here a broken query): the
// next small write does not analyze the tables again.
func TestAnalysisCountedWhenItsRowCountFails(t *testing.T) {
	ctx := context.Background()
	sqlstore.AnalyzeSooner(t, time.Second, 100*time.Millisecond)
	db, d, _ := migratedTo(t, "postgres", math.MaxInt) // every migration: the store's code writes today's schema
	d.Analyze.Rows = "SELECT no_such_column FROM pg_class"
	s := sqlstore.New(db, db, d)
	defer s.Close()
	for _, table := range []string{"passages", "files"} {
		if _, err := db.Exec(`ALTER TABLE ` + table + ` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	analyzed := func() (n int64) {
		t.Helper()
		if err := db.QueryRow(`SELECT analyze_count FROM pg_stat_user_tables WHERE relid = 'passages'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	f := storetest.IndexableFile(t, s)
	ps := make([]platform.Passage, 600)
	for i := range ps {
		ps[i] = storetest.Passage(f, i, fmt.Sprintf("passage %d", i))
	}
	if err := s.CompleteIndexing(ctx, f.ID, f.Generation, "v2", ps, time.Now()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // a hang guard: it takes about a second
	for analyzed() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the large write was not analyzed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.CompleteIndexing(ctx, f.ID, f.Generation, "v2", ps[:10], time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past the shortened wait: an analysis would have started
	if n := analyzed(); n != 1 {
		t.Fatalf("passages analyzed %d times after a small write, want still 1", n)
	}
}
