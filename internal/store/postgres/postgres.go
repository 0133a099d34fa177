// Package postgres opens a PostgreSQL database through pgx's database/sql
// driver. Every serve process may share the database; migrations take an
// advisory lock so concurrent starts apply them once.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"io/fs"
	"strings"

	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect returns the PostgreSQL dialect.
func Dialect() sqlstore.Dialect {
	sub, _ := fs.Sub(migrations, "migrations")
	return sqlstore.Dialect{
		Name:         "postgres",
		Numbered:     true,
		ForUpdate:    " FOR UPDATE",
		SkipLocked:   " FOR UPDATE OF j SKIP LOCKED",
		LockSubject:  "SELECT pg_advisory_xact_lock(hashtextextended(?, 7245190331))",
		IsUnique:     isUnique,
		IsForeignKey: isForeignKey,
		Migrations:   sub,
		Contains:     func(col string) string { return "strpos(" + col + ", ?) > 0" },
		FullText: sqlstore.FullText{
			Query:     tsQuery,
			From:      `FROM passages p JOIN files f ON f.id = p.file_id, to_tsquery('english', ?) tq WHERE p.tsv @@ tq`,
			Matching:  `SELECT c.seq FROM passages c WHERE c.tsv @@ to_tsquery('english', ?)`,
			Candidate: `p.seq`,
			Rank:      `ts_rank_cd(p.tsv, tq) DESC`,
		},
		MigrationLock: "SELECT pg_advisory_xact_lock(7245190331)",
	}
}

// tsQuery is a to_tsquery query of words joined by | (any) or & (all).
func tsQuery(words []string, all bool) string {
	if all {
		return strings.Join(words, " & ")
	}
	return strings.Join(words, " | ")
}

func isUnique(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

// isForeignKey: 23503 is foreign_key_violation.
func isForeignKey(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23503"
}

// Open connects to url and migrates the database.
func Open(ctx context.Context, url string) (*sqlstore.Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	s := sqlstore.New(db, db, Dialect())
	if _, err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
