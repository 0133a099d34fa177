package migratedata

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
)

// copier copies the rows of every table of the source, driven by the
// schema: each table SQLite lists (less its own and the full-text index's
// tables, which PostgreSQL computes as a generated column), the columns
// both sides have.
type copier struct {
	o                  Options
	src, dst           *sql.DB
	srcStore, dstStore *sqlstore.Store
	tables             []*table // in an order that respects foreign keys
}

type table struct {
	name   string
	cols   []column
	deps   []string
	rows   bool // a Tables API table of rows, created with its bot_tables row
	exists bool // in the target
}

type column struct {
	name, typ string // typ: the target's data_type
}

// skipped are tables not copied: the migrations' record (the target has
// its own), SQLite's bookkeeping of AUTOINCREMENT, and the tables the
// target's triggers fill as the rows of others are copied (copied too,
// they would count those rows twice).
func skipped(name string) bool {
	return name == "schema_migrations" || strings.HasPrefix(name, "sqlite_") || name == "ai_spend_days" || name == "passage_stats"
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// plan lists the source's tables and their columns, matched with the
// target's, in foreign-key order.
func (c *copier) plan(ctx context.Context) error {
	names, err := list[string](ctx, c.src, `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name`)
	if err != nil {
		return err
	}
	byName := map[string]*table{}
	for _, n := range names {
		if skipped(n) {
			continue
		}
		t := &table{name: n, rows: strings.HasPrefix(n, "rows_")}
		if t.deps, err = list[string](ctx, c.src, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, n); err != nil {
			return err
		}
		if err := c.columns(ctx, t); err != nil {
			return err
		}
		byName[n] = t
	}
	// Kahn's order, ties by name; the secrets first, so that an interrupted
	// run's target is recognised by its file storage record.
	done := map[string]bool{}
	for len(done) < len(byName) {
		var ready []*table
		for _, t := range byName {
			if done[t.name] {
				continue
			}
			ok := true
			for _, d := range t.deps {
				if d != t.name && byName[d] != nil && !done[d] {
					ok = false
				}
			}
			if t.rows && !done["bot_tables"] {
				ok = false
			}
			if ok {
				ready = append(ready, t)
			}
		}
		if len(ready) == 0 {
			return fmt.Errorf("the source's foreign keys form a cycle")
		}
		slices.SortFunc(ready, func(a, b *table) int {
			return cmp.Or(cmp.Compare(b2i(a.name != "secrets"), b2i(b.name != "secrets")), cmp.Compare(a.name, b.name))
		})
		t := ready[0]
		done[t.name] = true
		c.tables = append(c.tables, t)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// columns matches t's source columns with the target's. A table of rows
// not yet in the target takes its columns from the source (it is created
// with bot_tables' description before the copy).
func (c *copier) columns(ctx context.Context, t *table) error {
	srcCols, err := list[string](ctx, c.src, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, t.name)
	if err != nil {
		return err
	}
	rows, err := c.dst.QueryContext(ctx, `SELECT column_name, data_type, is_generated FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	target := map[string]string{}
	generated := map[string]bool{}
	for rows.Next() {
		var name, typ, gen string
		if err := rows.Scan(&name, &typ, &gen); err != nil {
			return err
		}
		target[name], generated[name] = typ, gen == "ALWAYS"
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t.exists = len(target) > 0
	if !t.exists && !t.rows {
		return fmt.Errorf("table %s of the data directory's database is not in the target database", t.name)
	}
	t.cols = nil
	for _, name := range srcCols {
		typ, ok := target[name]
		switch {
		case !t.exists:
			typ = "" // known once the table is created
		case !ok:
			return fmt.Errorf("column %s.%s of the data directory's database is not in the target database", t.name, name)
		case generated[name], kept(t.name, name):
			continue
		}
		t.cols = append(t.cols, column{name: name, typ: typ})
	}
	return nil
}

// kept tells the columns the target's triggers keep as rows of other tables
// are copied: copied too, they would count those rows twice.
func kept(table, column string) bool {
	return table == "conversations" && column == "message_count"
}

// copyTables copies every table in batches, each committed by itself and
// inserted with ON CONFLICT DO NOTHING: a run after an interruption skips
// what the earlier one copied. Sequences then continue after the copied
// rows.
func (c *copier) copyTables(ctx context.Context) error {
	for _, t := range c.tables {
		if !t.exists {
			if err := c.createRows(ctx, t); err != nil {
				return err
			}
		}
		n, err := c.copyTable(ctx, t)
		if err != nil {
			return fmt.Errorf("copying %s: %w", t.name, err)
		}
		fmt.Fprintf(c.o.Log, "table %s: %d rows\n", t.name, n)
	}
	for _, t := range c.tables {
		if err := c.setSequences(ctx, t); err != nil {
			return fmt.Errorf("sequences of %s: %w", t.name, err)
		}
	}
	_, err := c.dst.ExecContext(ctx, `ANALYZE`)
	return err
}

// createRows creates a Tables API table's rows table in the target, as
// its bot_tables row (copied before) describes it.
func (c *copier) createRows(ctx context.Context, t *table) error {
	var botID, id string
	err := c.src.QueryRowContext(ctx, `SELECT bot_id, id FROM bot_tables WHERE 'rows_' || substr(id, 5) = ?`, t.name).Scan(&botID, &id)
	if err != nil {
		return fmt.Errorf("table %s: no bot table describes it: %w", t.name, err)
	}
	desc, err := c.srcStore.GetTable(ctx, botID, id)
	if err != nil {
		return err
	}
	if sqlstore.RowsTable(desc) != t.name {
		return fmt.Errorf("table %s: bot table %s keeps its rows in %s", t.name, id, sqlstore.RowsTable(desc))
	}
	if err := c.dstStore.CreateRowsTable(ctx, desc); err != nil {
		return fmt.Errorf("creating %s: %w", t.name, err)
	}
	if err := c.columns(ctx, t); err != nil {
		return err
	}
	if !t.exists {
		return fmt.Errorf("creating %s: not in the target afterwards", t.name)
	}
	return nil
}

// batchBytes bounds a batch's values, for tables of large values (passages'
// vectors and page images).
const batchBytes = 8 << 20

func (c *copier) copyTable(ctx context.Context, t *table) (int64, error) {
	names := make([]string, len(t.cols))
	for i, col := range t.cols {
		names[i] = quote(col.name)
	}
	columns := strings.Join(names, ", ")
	read := `SELECT rowid, ` + columns + ` FROM ` + quote(t.name) + ` WHERE rowid > ? ORDER BY rowid LIMIT ?`
	var copied int64
	after := int64(math.MinInt64)
	for {
		rows, err := c.src.QueryContext(ctx, read, after, c.o.BatchSize)
		if err != nil {
			return copied, err
		}
		var batch [][]any
		size := 0
		for rows.Next() {
			vals := make([]any, len(t.cols)+1)
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return copied, err
			}
			after = vals[0].(int64)
			row := vals[1:]
			for i, col := range t.cols {
				if row[i], err = convert(row[i], col.typ); err != nil {
					rows.Close()
					return copied, fmt.Errorf("column %s: %w", col.name, err)
				}
				size += valueSize(row[i])
			}
			batch = append(batch, row)
			if size > batchBytes {
				break
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return copied, err
		}
		if len(batch) == 0 {
			return copied, nil
		}
		if err := c.insert(ctx, t, columns, batch); err != nil {
			return copied, err
		}
		copied += int64(len(batch))
		if c.o.Progress != nil {
			c.o.Progress(t.name, copied)
		}
	}
}

func (c *copier) insert(ctx context.Context, t *table, columns string, batch [][]any) error {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + quote(t.name) + ` (` + columns + `) VALUES `)
	args := make([]any, 0, len(batch)*len(t.cols))
	for i, row := range batch {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			b.WriteString("$" + strconv.Itoa(len(args)))
		}
		b.WriteByte(')')
	}
	b.WriteString(` ON CONFLICT DO NOTHING`)
	_, err := c.dst.ExecContext(ctx, b.String(), args...)
	return err
}

// convert turns a value SQLite gave into one of the target column's type:
// SQLite keeps booleans as integers and has no strict types.
func convert(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "boolean":
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case bool:
			return x, nil
		}
	case "bytea":
		switch x := v.(type) {
		case string:
			return []byte(x), nil
		case []byte:
			// SQLite gives an empty BLOB as a nil slice, which the
			// PostgreSQL driver would send as NULL.
			if x == nil {
				return []byte{}, nil
			}
			return x, nil
		}
	case "text", "character varying", "json", "jsonb":
		switch x := v.(type) {
		case []byte:
			return string(x), nil
		case string:
			return x, nil
		}
	case "bigint", "integer", "smallint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) {
				return int64(x), nil
			}
		}
	case "double precision", "real", "numeric":
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
	default:
		return v, nil
	}
	return nil, fmt.Errorf("a %T value (%v) for a %s column", v, v, typ)
}

func valueSize(v any) int {
	switch x := v.(type) {
	case []byte:
		return len(x)
	case string:
		return len(x)
	}
	return 8
}

// setSequences moves each sequence that numbers a column of t (a serial or
// identity column) past the largest copied value.
func (c *copier) setSequences(ctx context.Context, t *table) error {
	for _, col := range t.cols {
		var seq sql.NullString
		if err := c.dst.QueryRowContext(ctx, `SELECT pg_get_serial_sequence($1, $2)`, quote(t.name), col.name).Scan(&seq); err != nil {
			return err
		}
		if !seq.Valid {
			continue
		}
		q := `SELECT setval($1, COALESCE(MAX(` + quote(col.name) + `), 1), MAX(` + quote(col.name) + `) IS NOT NULL) FROM ` + quote(t.name)
		if _, err := c.dst.ExecContext(ctx, q, seq.String); err != nil {
			return err
		}
	}
	return nil
}

func count(ctx context.Context, db *sql.DB, table string) (int64, error) {
	var n int64
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quote(table)).Scan(&n)
	return n, err
}

// list runs a query whose rows are one column.
func list[T any](ctx context.Context, db *sql.DB, q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// storageID is the file storage id in a database's record of it.
func storageID(record []byte) (string, error) {
	var id blob.Identity
	if err := json.Unmarshal(record, &id); err != nil || id.ID == "" {
		return "", fmt.Errorf("the data directory's record of its file storage is unreadable: %q", record)
	}
	return id.ID, nil
}
