package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// ExplainClaim returns the scans and the execution time of the claim
// statement on PostgreSQL, run by EXPLAIN ANALYZE in a transaction that is
// rolled back ("" on SQLite).
func (s *Store) ExplainClaim(ctx context.Context, kind string, now time.Time, limit int) (string, error) {
	if !s.d.Numbered {
		return "", nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+s.q(s.claimQuery(limit)), claimArgs(kind, "explain", now, now.Add(time.Minute))...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line sql.NullString
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		if strings.Contains(line.String, "Execution Time") || strings.Contains(line.String, "Index Scan") || strings.Contains(line.String, "Seq Scan") {
			b.WriteString(strings.TrimSpace(line.String) + "; ")
		}
	}
	return b.String(), rows.Err()
}

// AnalyzeSooner shortens the store's waits before analyzing tables (see
// analyzer) until the test ends.
func AnalyzeSooner(t interface{ Cleanup(func()) }, every, delay time.Duration) {
	e, d := analyzeEvery, analyzeDelay
	analyzeEvery, analyzeDelay = every, delay
	t.Cleanup(func() { analyzeEvery, analyzeDelay = e, d })
}

// CondSQL is the SQL condition the store writes for c on table t.
func (s *Store) CondSQL(t platform.Table, c store.Cond) (string, error) {
	var b strings.Builder
	_, err := s.cond(&b, nil, t, c)
	return b.String(), err
}
