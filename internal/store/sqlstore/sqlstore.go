// Package sqlstore implements store.Store once for both SQL backends. The
// queries are standard SQL written with `?` placeholders; a Dialect supplies
// what differs: placeholder style, unique-violation detection, full-text
// search, migrations and the migration lock. Connection set-up lives in the sqlite and postgres
// packages.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Dialect is what differs between SQLite and PostgreSQL.
type Dialect struct {
	Name string
	// Numbered turns `?` placeholders into `$1, $2, …`.
	Numbered bool
	// IsUnique reports whether err is a unique-constraint violation.
	IsUnique func(error) bool
	// IsForeignKey reports whether err is a foreign-key violation: a row
	// refers to one that does not exist (deleted meanwhile, say).
	IsForeignKey func(error) bool
	// Migrations holds the numbered NNNN_name.sql files of this dialect.
	Migrations fs.FS
	// ForUpdate ends a SELECT that locks the rows it reads until the
	// transaction ends (" FOR UPDATE"); empty where write transactions
	// already run one at a time (SQLite).
	ForUpdate string
	// SkipLocked ends the job-claiming SELECT so that concurrent claimers
	// pass over the rows another one holds (" FOR UPDATE OF j SKIP LOCKED");
	// empty on SQLite.
	SkipLocked string
	// LockSubject takes a lock, held until the transaction ends, on the
	// string bound to its one placeholder: the transactions that queue and
	// finish the jobs of one subject run one at a time, so that each sees
	// the head the other marked. Empty where write transactions already run
	// one at a time (SQLite).
	LockSubject string
	// Contains returns a case-sensitive test that col contains the string
	// bound to one placeholder.
	Contains func(col string) string
	// FullText finds the passages holding words (see TextCandidates).
	FullText FullText
	// MigrationLock, when set, runs first in the migration transaction so
	// that concurrent processes migrate one at a time.
	MigrationLock string
	// Tables is how the Tables API's rows are kept and queried.
	Tables TableSQL
	// Analyze, when set, refreshes the planner's statistics after bulk
	// writes of passages (see analyzer).
	Analyze AnalyzeSQL
}

// AnalyzeSQL refreshes a planner's statistics on the passages and the
// files they belong to.
type AnalyzeSQL struct {
	// Statement analyzes the tables.
	Statement string
	// Rows returns the rows the planner counts in them after it.
	Rows string
}

// TableSQL is what differs between databases in the Tables API: the
// column types of a row table, its id column, how a value inside a JSON
// column is reached and compared, and regular expressions.
type TableSQL struct {
	// Types maps a platform.Column* kind to the database type.
	Types map[string]string
	// ID declares the row id column, generated on insert.
	ID string
	// JSONAt is the value inside JSON column col at the path bound to its
	// one placeholder (see PathArg); compared with a placeholder written
	// as JSONValue whose argument is JSONArg(v).
	JSONAt func(col string) string
	// JSONText is the same value as text (a string without its quotes).
	JSONText  func(col string) string
	PathArg   func(path []string) any
	JSONValue string
	JSONArg   func(v any) any
	// Regex tests expr against the pattern bound to its one placeholder.
	Regex func(expr string, caseInsensitive bool) string
	// RegexArg turns a pattern into what Regex binds.
	RegexArg func(pattern string, caseInsensitive bool) string
}

// FullText is how a dialect finds the passages holding words: FTS5 on
// SQLite, a tsvector column on PostgreSQL. Each SQL fragment holds one
// placeholder, for a query made by Query. Ranking is not the database's:
// the caller ranks what it finds (BM25 in Go, alike on every database).
type FullText struct {
	// Query joins words (letters and digits only) into a query that
	// matches the passages holding any of them, or, with all, every one.
	Query func(words []string, all bool) string
	// From is the FROM clause and first WHERE condition of the search:
	// passages p joined to their files f, where the passage matches the
	// query.
	From string
	// Matching selects the passages matching the query (for counting).
	Matching string
	// Candidates, when set, is the FROM clause and first WHERE condition of
	// the candidate search (passages p joined to their files f) for several
	// queries at once, each made by Query: its placeholders are the queries
	// as an array, then the most passages to take for each. Without it the
	// candidates are found with From and the queries joined by OR.
	Candidates string
	// CountEach, when set, counts the passages matching each of several
	// queries (each made by Query) in one statement of one shape, whatever
	// their number: its placeholders are the most to count for each, then
	// the queries as an array; it returns one count a row, in their order.
	// Without it each query is counted by a subquery of Matching.
	CountEach string
	// Purge, when set, removes from the index what deleted passages left
	// there (their words), once they are deleted.
	Purge string
}

// Store is a store.Store on a database/sql connection. Writes go to w; reads
// to r (SQLite keeps one writer connection and a separate read pool; with
// PostgreSQL both are the same pool).
type Store struct {
	w, r    *sql.DB
	d       Dialect
	rebinds sync.Map // query text -> numbered query text
	stmts   sync.Map // query text -> *sql.Stmt on r
	nstmts  atomic.Int32
	wstmts  sync.Map // query text -> *sql.Stmt on w, for fixed transaction statements
	batch   *batcher // group commit, when enabled
	counts  termCountCache
	stats   *analyzer      // nil where the dialect has no Analyze
	closers []func() error // what the backend runs beside the pools, stopped first
	queued  queuedJobs
}

// maxStmts bounds the statement cache; queries built from filters vary.
const maxStmts = 256

var _ store.Store = (*Store)(nil)

// New wraps the two pools. It does not migrate; call Migrate.
func New(w, r *sql.DB, d Dialect) *Store {
	s := &Store{w: w, r: r, d: d}
	if d.Analyze.Statement != "" {
		s.stats = newAnalyzer(s)
	}
	return s
}

// Pools returns the store's connection pools by name: "write" and "read"
// where they differ (SQLite), "main" where they are one (PostgreSQL).
func (s *Store) Pools() map[string]*sql.DB {
	if s.w == s.r {
		return map[string]*sql.DB{"main": s.w}
	}
	return map[string]*sql.DB{"write": s.w, "read": s.r}
}

// OnClose makes Close call f first: it stops what the backend runs beside
// the pools.
func (s *Store) OnClose(f func() error) { s.closers = append(s.closers, f) }

// Close stops what OnClose registered and group commit, and closes the
// cached statements and both pools.
func (s *Store) Close() error {
	var errs []error
	for _, f := range s.closers {
		errs = append(errs, f())
	}
	s.stats.stop()
	if s.batch != nil {
		s.batch.close()
	}
	for _, m := range []*sync.Map{&s.stmts, &s.wstmts} {
		m.Range(func(_, v any) bool {
			if st, ok := v.(*sql.Stmt); ok {
				st.Close()
			}
			return true
		})
	}
	errs = append(errs, s.w.Close())
	if s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.r.PingContext(ctx) }

// Dialect names the backend ("sqlite" or "postgres").
func (s *Store) Dialect() string { return s.d.Name }

// q adapts a query written with `?` placeholders to the dialect.
func (s *Store) q(query string) string {
	if !s.d.Numbered {
		return query
	}
	if v, ok := s.rebinds.Load(query); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	s.rebinds.Store(query, b.String())
	return b.String()
}

// stmt returns a cached prepared statement on the read pool for query
// (already adapted by q), or nil when the cache is full. Parsing and planning
// cost more than running the small queries of the hot read paths; the driver
// re-prepares per connection as needed.
func (s *Store) stmt(ctx context.Context, query string) *sql.Stmt {
	if v, ok := s.stmts.Load(query); ok {
		return v.(*sql.Stmt)
	}
	if s.nstmts.Load() >= maxStmts {
		return nil
	}
	st, err := s.r.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared query reports the error
	}
	if v, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return v.(*sql.Stmt)
	}
	s.nstmts.Add(1)
	return st
}

// txStmt returns query as a statement of tx. Statements are prepared once
// on the writer pool and reused, so a transaction's statements are parsed
// and planned once per process. The first use of a query prepares it on the
// transaction itself (SQLite's only writer connection is the one the
// transaction holds) and caches a pool statement once the connection is free.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	query = s.q(query)
	if v, ok := s.wstmts.Load(query); ok {
		if st, ok := v.(*sql.Stmt); ok {
			return tx.StmtContext(ctx, st), nil
		}
	} else if _, loaded := s.wstmts.LoadOrStore(query, preparing{}); !loaded {
		go func() {
			st, err := s.w.PrepareContext(context.Background(), query)
			if err != nil {
				s.wstmts.Delete(query)
				return
			}
			s.wstmts.Store(query, st)
		}()
	}
	return tx.PrepareContext(ctx, query)
}

// preparing marks a writer statement whose preparation is under way.
type preparing struct{}

// query and queryRow run a read on the read pool, through the statement
// cache when there is room in it.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query = s.q(query)
	if tx := txOf(ctx); tx != nil {
		return tx.QueryContext(ctx, query, args...)
	}
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.r.QueryContext(ctx, query, args...)
}

// queryStrings runs a read whose rows are one text column.
func (s *Store) queryStrings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	query = s.q(query)
	if tx := txOf(ctx); tx != nil {
		return tx.QueryRowContext(ctx, query, args...)
	}
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.r.QueryRowContext(ctx, query, args...)
}

// querier is what both *sql.DB and *sql.Tx offer; helpers take it so they
// compose inside or outside a transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// tx runs f in a write transaction, committing when f returns nil (with
// group commit, f's changes commit together with other transactions').
// Audit records riding with ctx (audit.With) are appended in it.
func (s *Store) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	if tx := txOf(ctx); tx != nil {
		return step(ctx, tx, f) // a step of InTx's transaction, which writes the audit records
	}
	f = s.auditing(ctx, f)
	if s.batch != nil {
		return s.batch.do(ctx, f)
	}
	return s.runTx(ctx, f)
}

// runTx runs f in a transaction of its own.
func (s *Store) runTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		s.queued.ended(tx, false)
		return err
	}
	err = tx.Commit()
	s.queued.ended(tx, err == nil)
	return err
}

func (s *Store) exec(ctx context.Context, db querier, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	db = on(ctx, db)
	if tx, ok := db.(*sql.Tx); ok {
		var st *sql.Stmt
		if st, err = s.txStmt(ctx, tx, query); err == nil {
			res, err = st.ExecContext(ctx, args...)
		}
	} else {
		res, err = db.ExecContext(ctx, s.q(query), args...)
	}
	if err != nil {
		if s.d.IsUnique(err) {
			return 0, fmt.Errorf("%w: %v", platform.ErrConflict, err)
		}
		if s.d.IsForeignKey(err) {
			return 0, fmt.Errorf("%w: %v", platform.ErrNotFound, err)
		}
		return 0, err
	}
	return res.RowsAffected()
}

// execOne is exec that must touch exactly one row, else ErrNotFound.
func (s *Store) execOne(ctx context.Context, db querier, query string, args ...any) error {
	n, err := s.exec(ctx, db, query, args...)
	if err == nil && n == 0 {
		err = platform.ErrNotFound
	}
	return err
}

func noRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return platform.ErrNotFound
	}
	return err
}

// Migrate applies every migration not yet recorded in schema_migrations, each
// in its own transaction.
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	entries, err := fs.ReadDir(s.d.Migrations, ".")
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	// Even CREATE TABLE IF NOT EXISTS races between processes on PostgreSQL:
	// take the migration lock first.
	if err := s.tx(ctx, func(tx *sql.Tx) error {
		if s.d.MigrationLock != "" {
			if _, err := tx.ExecContext(ctx, s.d.MigrationLock); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`)
		return err
	}); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, perr := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if perr != nil {
			return applied, fmt.Errorf("migration %s: name must start with its number", name)
		}
		body, err := fs.ReadFile(s.d.Migrations, name)
		if err != nil {
			return applied, err
		}
		did := false
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if s.d.MigrationLock != "" {
				if _, err := tx.ExecContext(ctx, s.d.MigrationLock); err != nil {
					return err
				}
			}
			var n int
			if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), num).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			did = true
			_, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`), num, name, time.Now().UnixMicro())
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", name, err)
		}
		if did {
			applied = append(applied, name)
		}
	}
	return applied, nil
}

// Empty reports whether no account exists yet.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts`).Scan(&n)
	return n == 0, err
}

// micros and fromMicros convert between time.Time and the stored integer.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// placeholders returns "?, ?, …" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// anys is xs as the arguments of placeholders(len(xs)).
func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// pageOf trims rows fetched with limit+1 to the page and returns the
// nextToken for the row that ends it.
func pageOf[T any](rows []T, limit int, cursor func(T) store.Cursor) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, cursor(rows[limit-1]).Encode()
}
