// Package sqlite opens the embedded SQLite database: one writer connection
// (SQLite allows one writer at a time; queueing in Go beats busy-waiting in
// the driver) and a read-only pool, in WAL mode.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect returns the SQLite dialect.
func Dialect() sqlstore.Dialect {
	sub, _ := fs.Sub(migrations, "migrations")
	return sqlstore.Dialect{
		Name:         "sqlite",
		IsUnique:     isUnique,
		IsForeignKey: isForeignKey,
		Migrations:   sub,
		Contains:     func(col string) string { return "instr(" + col + ", ?) > 0" },
		FullText: sqlstore.FullText{
			Query:    ftsQuery,
			From:     `FROM passages_fts JOIN passages p ON p.seq = passages_fts.rowid JOIN files f ON f.id = p.file_id WHERE passages_fts MATCH ?`,
			Matching: `SELECT rowid FROM passages_fts WHERE passages_fts MATCH ?`,
			Purge:    `INSERT INTO passages_fts(passages_fts) VALUES ('optimize')`,
		},
		Tables: sqlstore.TableSQL{
			Types: map[string]string{platform.ColumnString: "TEXT", platform.ColumnNumber: "REAL", platform.ColumnBoolean: "INTEGER",
				platform.ColumnDate: "TEXT", platform.ColumnJSON: "TEXT"},
			ID:        "id INTEGER PRIMARY KEY AUTOINCREMENT",
			JSONAt:    func(col string) string { return "json_extract(" + col + ", ?)" },
			JSONText:  func(col string) string { return "json_extract(" + col + ", ?)" },
			PathArg:   jsonPath,
			JSONValue: "?",
			JSONArg:   jsonArg,
			Regex:     func(expr string, _ bool) string { return expr + " REGEXP ?" },
			RegexArg: func(p string, ci bool) string {
				if ci {
					return "(?i)" + p
				}
				return p
			},
		},
	}
}

// jsonPath is a SQLite JSON path to keys: $."a"."b".
func jsonPath(keys []string) any {
	var b strings.Builder
	b.WriteString("$")
	for _, k := range keys {
		b.WriteString(`."` + strings.ReplaceAll(k, `"`, `\"`) + `"`)
	}
	return b.String()
}

// jsonArg is a filter value as json_extract returns it: booleans are 1 and 0.
func jsonArg(v any) any {
	if b, ok := v.(bool); ok {
		if b {
			return 1
		}
		return 0
	}
	return v
}

// regexps caches compiled patterns of the regexp function.
var regexps sync.Map

func init() {
	// X REGEXP Y calls regexp(Y, X): Go's regular expressions (RE2).
	sqlite.MustRegisterDeterministicScalarFunction("regexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		pattern, _ := args[0].(string)
		var s string
		switch v := args[1].(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		case nil:
			return false, nil
		default:
			s = fmt.Sprint(v)
		}
		re, ok := regexps.Load(pattern)
		if !ok {
			c, err := regexp.Compile(pattern)
			if err != nil {
				return nil, err
			}
			re, _ = regexps.LoadOrStore(pattern, c)
		}
		return re.(*regexp.Regexp).MatchString(s), nil
	})
}

// ftsQuery is an FTS5 query of words joined by OR (any) or AND (all), each
// quoted (so that none is taken for query syntax).
func ftsQuery(words []string, all bool) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + w + `"`
	}
	if all {
		return strings.Join(quoted, " AND ")
	}
	return strings.Join(quoted, " OR ")
}

func isUnique(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		c := e.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

func isForeignKey(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// dsn builds the connection string; busy_timeout comes first so it already
// applies while the other pragmas run.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBound)) // checkpoint.go
	}
	return "file:" + path + "?" + q.Encode()
}

// readers is the size of the read pool. More readers made concurrent writes
// markedly slower without making reads faster (BenchmarkUpsertFile and
// BenchmarkListBots; see docs/benchmarks.md).
const readers = 3

// Open opens (creating if needed) the database file at path and migrates it.
func Open(ctx context.Context, path string) (*sqlstore.Store, error) {
	w, err := pool(path, false, 1)
	if err != nil {
		return nil, err
	}
	// Migrate before opening readers so they never see a half-created schema.
	s := sqlstore.New(w, w, Dialect())
	if _, err := s.Migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r, err := pool(path, true, readers)
	if err != nil {
		w.Close()
		return nil, err
	}
	st := sqlstore.New(w, r, Dialect())
	st.EnableGroupCommit()
	cp, err := startCheckpointer(path)
	if err != nil {
		st.Close()
		return nil, err
	}
	st.OnClose(cp.close)
	return st, nil
}

// pool opens n connections to the database at path, kept open.
func pool(path string, readOnly bool, n int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, readOnly))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}
