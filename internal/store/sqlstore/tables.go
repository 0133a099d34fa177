package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// The Tables API's tables: their definitions in bot_tables, their rows in
// a database table each (rowsTable), one column per table column. Names in
// the SQL text are ours only (rows_<id>, c1, c2, …); values are bound.

var tableTagsTable = tagTable{"bot_table_tags", "table_id"}

const tableCols = `t.id, t.bot_id, t.name, t.schema, t.columns, t.key_column, t.frozen, t.factor, t.tags, t.compute, t.version, t.created_at, t.updated_at`

func scanTable(sc interface{ Scan(...any) error }) (platform.Table, error) {
	var t platform.Table
	var schema, cols, tags []byte
	var frozen, compute int64
	var c, u int64
	err := sc.Scan(&t.ID, &t.BotID, &t.Name, &schema, &cols, &t.KeyColumn, &frozen, &t.Factor, &tags, &compute, &t.Version, &c, &u)
	if err != nil {
		return t, noRows(err)
	}
	t.Schema, t.Frozen, t.ComputeEnabled, t.CreatedAt, t.UpdatedAt = schema, frozen != 0, compute != 0, fromMicros(c), fromMicros(u)
	if err := json.Unmarshal(cols, &t.Columns); err != nil {
		return t, err
	}
	t.Tags, err = readTags(tags)
	return t, err
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rowsTable is the database table of a table's rows.
func rowsTable(t platform.Table) string { return "rows_" + strings.TrimPrefix(t.ID, "tbl_") }

// columnDDL adds a column's database column (and its index, for the kinds
// that are compared and ordered) to the rows table.
func (s *Store) columnDDL(t platform.Table, c platform.TableColumn) []string {
	rt := rowsTable(t)
	out := []string{`ALTER TABLE ` + rt + ` ADD COLUMN ` + c.Phys + ` ` + s.d.Tables.Types[c.Type]}
	if c.Type != platform.ColumnJSON {
		out = append(out, `CREATE INDEX `+rt+`_`+c.Phys+` ON `+rt+`(`+c.Phys+`)`)
	}
	return out
}

// keyIndex is the unique index of a table's key column.
func keyIndex(t platform.Table) string { return rowsTable(t) + "_key" }

func (s *Store) execDDL(ctx context.Context, tx *sql.Tx, stmts ...string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			if s.d.IsUnique(err) {
				return platform.ErrConflict
			}
			return err
		}
	}
	return nil
}

func (s *Store) column(t platform.Table, name string) (platform.TableColumn, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return platform.TableColumn{}, false
}

func (s *Store) CreateTable(ctx context.Context, t platform.Table) error {
	cols, _ := json.Marshal(t.Columns)
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_tables (id, bot_id, name, schema, columns, key_column, frozen, factor, tags, compute, version, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`, t.ID, t.BotID, t.Name, string(t.Schema), string(cols), t.KeyColumn, b2i(t.Frozen), t.Factor,
			tagsJSON(t.Tags), b2i(t.ComputeEnabled), micros(t.CreatedAt), micros(t.UpdatedAt)); err != nil {
			return err
		}
		if err := s.writeTags(ctx, tx, tableTagsTable, t.ID, t.BotID, t.Tags); err != nil {
			return err
		}
		return s.execDDL(ctx, tx, s.rowsDDL(t)...)
	})
}

// rowsDDL creates the table of t's rows with its columns and indexes.
func (s *Store) rowsDDL(t platform.Table) []string {
	rt := rowsTable(t)
	ddl := []string{`CREATE TABLE ` + rt + ` (` + s.d.Tables.ID + `, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)`,
		`CREATE INDEX ` + rt + `_created ON ` + rt + `(created_at)`, `CREATE INDEX ` + rt + `_updated ON ` + rt + `(updated_at)`}
	for _, c := range t.Columns {
		ddl = append(ddl, s.columnDDL(t, c)...)
	}
	if t.KeyColumn != "" {
		c, _ := s.column(t, t.KeyColumn)
		ddl = append(ddl, `CREATE UNIQUE INDEX `+keyIndex(t)+` ON `+rt+`(`+c.Phys+`)`)
	}
	return ddl
}

// CreateRowsTable creates the (missing) table of t's rows, for a table
// whose row in bot_tables was copied from another database.
func (s *Store) CreateRowsTable(ctx context.Context, t platform.Table) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.execDDL(ctx, tx, s.rowsDDL(t)...) })
}

// RowsTable is the name of the database table of t's rows.
func RowsTable(t platform.Table) string { return rowsTable(t) }

func (s *Store) GetTable(ctx context.Context, botID, idOrName string) (platform.Table, error) {
	t, err := scanTable(s.queryRow(ctx, `SELECT `+tableCols+` FROM bot_tables t WHERE t.bot_id = ? AND t.id = ?`, botID, idOrName))
	if err == platform.ErrNotFound {
		t, err = scanTable(s.queryRow(ctx, `SELECT `+tableCols+` FROM bot_tables t WHERE t.bot_id = ? AND t.name = ?`, botID, idOrName))
	}
	return t, err
}

func (s *Store) ListTables(ctx context.Context, botID string, tags map[string][]string) ([]platform.Table, error) {
	// The tag filter names its rows t: the tables are bt here.
	var q strings.Builder
	q.WriteString(`SELECT ` + strings.ReplaceAll(tableCols, "t.", "bt.") + ` FROM bot_tables bt WHERE bt.bot_id = ?`)
	args := tagFilter(&q, []any{botID}, tableTagsTable.name+` t WHERE t.table_id = bt.id`, tags, nil)
	rows, err := s.query(ctx, q.String()+` ORDER BY bt.created_at, bt.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []platform.Table{}
	for rows.Next() {
		t, err := scanTable(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *Store) UpdateTable(ctx context.Context, t platform.Table, added []platform.TableColumn) error {
	cols, _ := json.Marshal(t.Columns)
	return s.tx(ctx, func(tx *sql.Tx) error {
		var oldKey string
		if err := tx.QueryRowContext(ctx, s.q(`SELECT key_column FROM bot_tables WHERE id = ?`), t.ID).Scan(&oldKey); err != nil {
			return noRows(err)
		}
		n, err := s.exec(ctx, tx, `UPDATE bot_tables SET name = ?, schema = ?, columns = ?, key_column = ?, frozen = ?, factor = ?, tags = ?, compute = ?,
			version = version + 1, updated_at = ? WHERE id = ? AND version = ?`, t.Name, string(t.Schema), string(cols), t.KeyColumn, b2i(t.Frozen),
			t.Factor, tagsJSON(t.Tags), b2i(t.ComputeEnabled), micros(t.UpdatedAt), t.ID, t.Version)
		if err != nil {
			return err
		}
		if n == 0 {
			return platform.ErrConflict
		}
		if err := s.writeTags(ctx, tx, tableTagsTable, t.ID, t.BotID, t.Tags); err != nil {
			return err
		}
		var ddl []string
		for _, c := range added {
			ddl = append(ddl, s.columnDDL(t, c)...)
		}
		if oldKey != t.KeyColumn {
			if oldKey != "" {
				ddl = append(ddl, `DROP INDEX `+keyIndex(t))
			}
			if t.KeyColumn != "" {
				c, _ := s.column(t, t.KeyColumn)
				ddl = append(ddl, `CREATE UNIQUE INDEX `+keyIndex(t)+` ON `+rowsTable(t)+`(`+c.Phys+`)`)
			}
		}
		return s.execDDL(ctx, tx, ddl...)
	})
}

func (s *Store) DeleteTable(ctx context.Context, t platform.Table) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `DELETE FROM bot_tables WHERE id = ?`, t.ID); err != nil {
			return err
		}
		return s.execDDL(ctx, tx, `DROP TABLE `+rowsTable(t))
	})
}

// dropTables drops the rows tables of the tables selected by where (a
// condition on bot_id) before their bots go.
func (s *Store) dropTables(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id FROM bot_tables WHERE `+where), args...)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.execDDL(ctx, tx, `DROP TABLE `+rowsTable(platform.Table{ID: id})); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) CountTableRows(ctx context.Context, t platform.Table) (int64, error) {
	var n int64
	err := on(ctx, s.r).QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM `+rowsTable(t))).Scan(&n)
	return n, err
}

func (s *Store) CountWorkspaceTableRows(ctx context.Context, workspaceID string) (int64, error) {
	rows, err := s.query(ctx, `SELECT t.id, t.factor FROM bot_tables t JOIN bots b ON b.id = t.bot_id WHERE b.workspace_id = ?`, workspaceID)
	if err != nil {
		return 0, err
	}
	type tf struct {
		id     string
		factor int64
	}
	var ts []tf
	for rows.Next() {
		var x tf
		if err := rows.Scan(&x.id, &x.factor); err != nil {
			rows.Close()
			return 0, err
		}
		ts = append(ts, x)
	}
	rows.Close()
	var total int64
	for _, x := range ts {
		n, err := s.CountTableRows(ctx, platform.Table{ID: x.id})
		if err != nil {
			return 0, err
		}
		total += n * x.factor
	}
	return total, rows.Err()
}

// dbValue is a value as its column keeps it.
func dbValue(c platform.TableColumn, v any) any {
	if v == nil {
		return nil
	}
	switch c.Type {
	case platform.ColumnBoolean:
		b, _ := v.(bool)
		return b2i(b)
	case platform.ColumnJSON:
		if raw, ok := v.(json.RawMessage); ok {
			return string(raw)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return v
}

// apiValue is a column's value as rows carry it.
func apiValue(c platform.TableColumn, v any) any {
	if v == nil {
		return nil
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	switch c.Type {
	case platform.ColumnBoolean:
		switch x := v.(type) {
		case int64:
			return x != 0
		case bool:
			return x
		}
	case platform.ColumnNumber:
		switch x := v.(type) {
		case int64:
			return float64(x)
		}
	case platform.ColumnJSON:
		if s, ok := v.(string); ok {
			return json.RawMessage(s)
		}
	}
	return v
}

// selectRows is the SELECT list of a table's rows.
func selectRows(t platform.Table) string {
	var b strings.Builder
	b.WriteString(`id, created_at, updated_at`)
	for _, c := range t.Columns {
		b.WriteString(", " + c.Phys)
	}
	return b.String()
}

func scanRows(t platform.Table, rows *sql.Rows) ([]platform.TableRow, error) {
	defer rows.Close()
	out := []platform.TableRow{}
	for rows.Next() {
		vals := make([]any, len(t.Columns))
		var r platform.TableRow
		var c, u int64
		dst := []any{&r.ID, &c, &u}
		for i := range vals {
			dst = append(dst, &vals[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		r.CreatedAt, r.UpdatedAt = fromMicros(c), fromMicros(u)
		r.Values = make(map[string]any, len(t.Columns))
		for i, col := range t.Columns {
			r.Values[col.Name] = apiValue(col, vals[i])
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// readRows reads rows by id in tx, in id order.
func (s *Store) readRows(ctx context.Context, tx *sql.Tx, t platform.Table, ids []int64) ([]platform.TableRow, error) {
	if len(ids) == 0 {
		return []platform.TableRow{}, nil
	}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT `+selectRows(t)+` FROM `+rowsTable(t)+` WHERE id IN (`+placeholders(len(ids))+`) ORDER BY id`), anys(ids)...)
	if err != nil {
		return nil, err
	}
	return scanRows(t, rows)
}

// insertRow inserts one row in tx and returns its id.
func (s *Store) insertRow(ctx context.Context, tx *sql.Tx, t platform.Table, r platform.TableRow) (int64, error) {
	cols := []string{"created_at", "updated_at"}
	args := []any{micros(r.CreatedAt), micros(r.UpdatedAt)}
	for _, c := range t.Columns {
		if v, ok := r.Values[c.Name]; ok {
			cols = append(cols, c.Phys)
			args = append(args, dbValue(c, v))
		}
	}
	var id int64
	err := tx.QueryRowContext(ctx, s.q(`INSERT INTO `+rowsTable(t)+` (`+strings.Join(cols, ", ")+`) VALUES (`+placeholders(len(cols))+`) RETURNING id`), args...).Scan(&id)
	if err != nil && s.d.IsUnique(err) {
		return 0, platform.ErrConflict
	}
	return id, err
}

// setRow writes the given values of row r.ID in tx.
func (s *Store) setRow(ctx context.Context, tx *sql.Tx, t platform.Table, r platform.TableRow) error {
	sets := []string{"updated_at = ?"}
	args := []any{micros(r.UpdatedAt)}
	for _, c := range t.Columns {
		if v, ok := r.Values[c.Name]; ok {
			sets = append(sets, c.Phys+" = ?")
			args = append(args, dbValue(c, v))
		}
	}
	res, err := tx.ExecContext(ctx, s.q(`UPDATE `+rowsTable(t)+` SET `+strings.Join(sets, ", ")+` WHERE id = ?`), append(args, r.ID)...)
	if err != nil {
		if s.d.IsUnique(err) {
			return platform.ErrConflict
		}
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return platform.ErrNotFound
	}
	return nil
}

func (s *Store) InsertTableRows(ctx context.Context, t platform.Table, rows []platform.TableRow) ([]platform.TableRow, error) {
	var out []platform.TableRow
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ids := make([]int64, len(rows))
		for i, r := range rows {
			id, err := s.insertRow(ctx, tx, t, r)
			if err != nil {
				return err
			}
			ids[i] = id
		}
		var err error
		out, err = s.readRows(ctx, tx, t, ids)
		return err
	})
	return out, err
}

func (s *Store) UpdateTableRows(ctx context.Context, t platform.Table, rows []platform.TableRow) ([]platform.TableRow, error) {
	var out []platform.TableRow
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ids := make([]int64, len(rows))
		for i, r := range rows {
			if err := s.setRow(ctx, tx, t, r); err != nil {
				return err
			}
			ids[i] = r.ID
		}
		var err error
		out, err = s.readRows(ctx, tx, t, ids)
		return err
	})
	return out, err
}

func (s *Store) UpsertTableRows(ctx context.Context, t platform.Table, key string, rows []platform.TableRow) ([]platform.TableRow, []platform.TableRow, error) {
	kc, ok := s.column(t, key)
	if !ok {
		return nil, nil, platform.ErrNotFound
	}
	var inserted, updated []platform.TableRow
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var ins, upd []int64
		for _, r := range rows {
			var id int64
			err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM `+rowsTable(t)+` WHERE `+kc.Phys+` = ? ORDER BY id LIMIT 1`), dbValue(kc, r.Values[key])).Scan(&id)
			switch {
			case err == nil:
				r.ID, r.CreatedAt = id, r.UpdatedAt
				if err := s.setRow(ctx, tx, t, r); err != nil {
					return err
				}
				upd = append(upd, id)
			case err == sql.ErrNoRows:
				id, err := s.insertRow(ctx, tx, t, r)
				if err != nil {
					return err
				}
				ins = append(ins, id)
			default:
				return err
			}
		}
		var err error
		if inserted, err = s.readRows(ctx, tx, t, ins); err != nil {
			return err
		}
		updated, err = s.readRows(ctx, tx, t, upd)
		return err
	})
	return inserted, updated, err
}

func (s *Store) FindTableRows(ctx context.Context, t platform.Table, q store.TableQuery) ([]platform.TableRow, bool, error) {
	var b strings.Builder
	b.WriteString(`SELECT ` + selectRows(t) + ` FROM ` + rowsTable(t))
	args, err := s.where(&b, t, q.Where)
	if err != nil {
		return nil, false, err
	}
	order := "id"
	switch q.OrderBy {
	case "", "id":
	case "createdAt":
		order = "created_at"
	case "updatedAt":
		order = "updated_at"
	default:
		c, _ := s.column(t, q.OrderBy)
		order = c.Phys
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	b.WriteString(` ORDER BY ` + order + dir)
	if order != "id" {
		b.WriteString(`, id` + dir)
	}
	b.WriteString(` LIMIT ? OFFSET ?`)
	args = append(args, q.Limit+1, q.Offset)
	rows, err := s.query(ctx, b.String(), args...)
	if err != nil {
		return nil, false, err
	}
	out, err := scanRows(t, rows)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	return out, more, nil
}

func (s *Store) DeleteTableRows(ctx context.Context, t platform.Table, ids []int64, where *store.Cond, all bool) (int64, error) {
	var b strings.Builder
	b.WriteString(`DELETE FROM ` + rowsTable(t))
	var args []any
	switch {
	case all:
	case len(ids) > 0:
		b.WriteString(` WHERE id IN (` + placeholders(len(ids)) + `)`)
		for _, id := range ids {
			args = append(args, id)
		}
	case where != nil:
		var err error
		if args, err = s.where(&b, t, where); err != nil {
			return 0, err
		}
	default:
		return 0, nil
	}
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(b.String()), args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// where writes " WHERE <c>" when there is a filter, and its arguments.
func (s *Store) where(b *strings.Builder, t platform.Table, c *store.Cond) ([]any, error) {
	if c == nil {
		return nil, nil
	}
	b.WriteString(` WHERE `)
	return s.cond(b, nil, t, *c)
}

// cond writes a filter as a SQL condition on the rows table, its values
// bound. The filter was checked against the table's columns.
func (s *Store) cond(b *strings.Builder, args []any, t platform.Table, c store.Cond) ([]any, error) {
	var join func(parts []store.Cond, op string) ([]any, error)
	join = func(parts []store.Cond, op string) ([]any, error) {
		if len(parts) == 0 {
			if op == " AND " {
				b.WriteString("1 = 1")
			} else {
				b.WriteString("1 = 0")
			}
			return args, nil
		}
		b.WriteString("(")
		var err error
		if len(parts) > 2 {
			// In halves: a chain of n terms is an expression n deep, and
			// SQLite refuses one deeper than 1000.
			if args, err = join(parts[:len(parts)/2], op); err == nil {
				b.WriteString(op)
				args, err = join(parts[len(parts)/2:], op)
			}
		} else {
			for i, p := range parts {
				if i > 0 {
					b.WriteString(op)
				}
				if args, err = s.cond(b, args, t, p); err != nil {
					break
				}
			}
		}
		b.WriteString(")")
		return args, err
	}
	switch {
	case c.And != nil:
		return join(c.And, " AND ")
	case c.Or != nil:
		return join(c.Or, " OR ")
	case c.Not != nil:
		b.WriteString("NOT (")
		args, err := s.cond(b, args, t, *c.Not)
		b.WriteString(")")
		// A row without the value passes a negated test, as in MongoDB.
		return args, err
	}
	ts := s.d.Tables
	var expr string
	var col platform.TableColumn
	switch c.Column {
	case "id":
		expr, col = "id", platform.TableColumn{Type: platform.ColumnNumber}
	case "createdAt", "updatedAt":
		expr, col = map[string]string{"createdAt": "created_at", "updatedAt": "updated_at"}[c.Column], platform.TableColumn{Type: platform.ColumnNumber}
	default:
		var ok bool
		if col, ok = s.column(t, c.Column); !ok {
			return nil, fmt.Errorf("sqlstore: a filter on %q, which table %s does not have", c.Column, t.ID)
		}
		expr = col.Phys
	}
	nested := len(c.Path) > 0
	value := "?"
	arg := func(v any) any { return dbValue(col, v) }
	if nested {
		if c.Op == "regex" {
			expr = ts.JSONText(col.Phys)
		} else {
			expr = ts.JSONAt(col.Phys)
		}
		value, arg = ts.JSONValue, ts.JSONArg
	}
	pathArgs := func() {
		if nested {
			args = append(args, ts.PathArg(c.Path))
		}
	}
	ops := map[string]string{"eq": " = ", "ne": " <> ", "gt": " > ", "gte": " >= ", "lt": " < ", "lte": " <= "}
	switch c.Op {
	case "eq", "gt", "gte", "lt", "lte":
		if c.Value == nil && c.Op == "eq" {
			b.WriteString(expr + " IS NULL")
			pathArgs()
			return args, nil
		}
		b.WriteString(expr + ops[c.Op] + value)
		pathArgs()
		args = append(args, arg(c.Value))
	case "ne":
		if c.Value == nil {
			b.WriteString(expr + " IS NOT NULL")
			pathArgs()
			return args, nil
		}
		b.WriteString("(" + expr + " IS NULL OR " + expr + " <> " + value + ")")
		pathArgs()
		pathArgs()
		args = append(args, arg(c.Value))
	case "in", "nin":
		vals, _ := c.Value.([]any)
		if len(vals) == 0 {
			if c.Op == "in" {
				b.WriteString("1 = 0")
			} else {
				b.WriteString("1 = 1")
			}
			return args, nil
		}
		list := strings.TrimSuffix(strings.Repeat(value+", ", len(vals)), ", ")
		if c.Op == "in" {
			b.WriteString(expr + " IN (" + list + ")")
			pathArgs()
		} else {
			b.WriteString("(" + expr + " IS NULL OR " + expr + " NOT IN (" + list + "))")
			pathArgs()
			pathArgs()
		}
		for _, v := range vals {
			args = append(args, arg(v))
		}
	case "exists":
		if c.Value == true {
			b.WriteString(expr + " IS NOT NULL")
		} else {
			b.WriteString(expr + " IS NULL")
		}
		pathArgs()
	case "regex":
		pattern, _ := c.Value.(string)
		ci := strings.Contains(c.Flags, "i")
		b.WriteString(ts.Regex(expr, ci))
		pathArgs()
		args = append(args, ts.RegexArg(pattern, ci))
	default:
		return nil, platform.Invalid("filter", "unknown operator %q", c.Op)
	}
	return args, nil
}

// CopyTableRows copies every row of from into to (a table with the same
// columns), keeping their dates.
func (s *Store) CopyTableRows(ctx context.Context, from, to platform.Table) error {
	var cols strings.Builder
	cols.WriteString("created_at, updated_at")
	for _, c := range from.Columns {
		cols.WriteString(", " + c.Phys)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO `+rowsTable(to)+` (`+cols.String()+`) SELECT `+cols.String()+` FROM `+rowsTable(from)+` ORDER BY id`)
		return err
	})
}

func (s *Store) GroupTableRows(ctx context.Context, t platform.Table, q store.TableQuery, aggs []store.Aggregate) ([]map[string]any, bool, error) {
	var sel, keys []string
	cols := make([]platform.TableColumn, len(aggs))
	for i, a := range aggs {
		c, ok := s.column(t, a.Column)
		if !ok {
			return nil, false, platform.ErrNotFound
		}
		cols[i] = c
		switch a.Op {
		case "key":
			sel = append(sel, c.Phys)
			keys = append(keys, c.Phys)
		case "avg", "sum", "min", "max", "count":
			sel = append(sel, strings.ToUpper(a.Op)+"("+c.Phys+")")
		default:
			return nil, false, platform.Invalid("group", "unknown aggregate %q", a.Op)
		}
	}
	var b strings.Builder
	b.WriteString(`SELECT ` + strings.Join(sel, ", ") + ` FROM ` + rowsTable(t))
	args, err := s.where(&b, t, q.Where)
	if err != nil {
		return nil, false, err
	}
	if len(keys) > 0 {
		dir := " ASC"
		if q.Desc {
			dir = " DESC"
		}
		b.WriteString(` GROUP BY ` + strings.Join(keys, ", ") + ` ORDER BY ` + strings.Join(keys, dir+", ") + dir)
	}
	b.WriteString(` LIMIT ? OFFSET ?`)
	rows, err := s.query(ctx, b.String(), append(args, q.Limit+1, q.Offset)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	out := []map[string]any{}
	for rows.Next() {
		vals := make([]any, len(aggs))
		dst := make([]any, len(aggs))
		for i := range vals {
			dst[i] = &vals[i]
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, false, err
		}
		g := make(map[string]any, len(aggs))
		for i, a := range aggs {
			switch a.Op {
			case "key", "min", "max":
				g[a.As] = apiValue(cols[i], vals[i])
			case "count":
				g[a.As] = toFloat(vals[i])
			default:
				g[a.As] = toFloat(vals[i])
			}
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	return out, more, nil
}

// toFloat is an aggregate's number (nil stays nil: no values).
func toFloat(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case []byte:
		f, err := strconv.ParseFloat(string(x), 64)
		if err == nil {
			return f
		}
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err == nil {
			return f
		}
	}
	return v
}

const tableJobCols = `id, bot_id, table_id, type, status, progress, input_file_id, output_file_id, failure, created_at, updated_at`

// PutTableJob records a table job, or its new state.
func (s *Store) PutTableJob(ctx context.Context, j platform.TableJob) error {
	_, err := s.exec(ctx, s.w, `INSERT INTO table_jobs (`+tableJobCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, progress = excluded.progress, output_file_id = excluded.output_file_id,
		failure = excluded.failure, updated_at = excluded.updated_at`,
		j.ID, j.BotID, j.TableID, j.Type, j.Status, j.Progress, j.InputFileID, j.OutputFileID, j.Failure, micros(j.CreatedAt), micros(j.UpdatedAt))
	return err
}

// ListTableJobs lists a table's jobs, newest first.
func (s *Store) ListTableJobs(ctx context.Context, tableID string) ([]platform.TableJob, error) {
	rows, err := s.query(ctx, `SELECT `+tableJobCols+` FROM table_jobs WHERE table_id = ? ORDER BY created_at DESC, id DESC LIMIT 100`, tableID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []platform.TableJob{}
	for rows.Next() {
		var j platform.TableJob
		var c, u int64
		if err := rows.Scan(&j.ID, &j.BotID, &j.TableID, &j.Type, &j.Status, &j.Progress, &j.InputFileID, &j.OutputFileID, &j.Failure, &c, &u); err != nil {
			return nil, err
		}
		j.CreatedAt, j.UpdatedAt = fromMicros(c), fromMicros(u)
		out = append(out, j)
	}
	return out, rows.Err()
}
