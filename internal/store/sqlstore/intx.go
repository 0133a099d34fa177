package sqlstore

import (
	"context"
	"database/sql"
)

// txKey carries InTx's transaction in the context of its steps.
type txKey struct{}

func txOf(ctx context.Context) *sql.Tx {
	tx, _ := ctx.Value(txKey{}).(*sql.Tx)
	return tx
}

// on is db, or the transaction of the InTx that ctx is a step of: inside
// one, every read and write of the store goes through its transaction.
func on(ctx context.Context, db querier) querier {
	if tx := txOf(ctx); tx != nil {
		return tx
	}
	return db
}

// InTx runs f as one transaction: every call of the store made with the
// context f is given is a step of it, and what they wrote is committed when
// f returns nil, or rolled back whole when it returns an error. A step that
// fails is rolled back by itself first (a savepoint), so f may go on after
// it. Audit records riding with ctx are appended once, with the commit.
// Called inside another InTx, f is a part of that one.
func (s *Store) InTx(ctx context.Context, f func(ctx context.Context) error) error {
	if txOf(ctx) != nil {
		return f(ctx)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		return f(context.WithValue(ctx, txKey{}, tx))
	})
}

// step runs f in a savepoint of tx.
func step(ctx context.Context, tx *sql.Tx, f func(tx *sql.Tx) error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT step`); err != nil {
		return err
	}
	if err := f(tx); err != nil {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT step`); rerr != nil {
			return rerr
		}
		_, _ = tx.ExecContext(ctx, `RELEASE SAVEPOINT step`)
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT step`)
	return err
}
