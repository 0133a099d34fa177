package tables

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/plans"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Service implements the Tables API for one bot at a time: every method
// takes the calling bot's id and reaches only that bot's tables.
type Service struct {
	store Store
	files Files // where exports go and imports come from
	clock platform.Clock
	// locks serialize the writes to a table's definition within this
	// process, so that getOrCreate creates one.
	locks platform.KeyLocks
}

// Store is what the Tables API needs of the database: the tables, and the
// workspace a bot's rows count against.
type Store interface {
	store.Tables
	GetBotWorkspace(ctx context.Context, botID string) (string, error)
	GetWorkspace(ctx context.Context, id string) (platform.Workspace, error)
}

// New returns the Tables API's service; exports and imports use files.
func New(st Store, files Files, clock platform.Clock) *Service {
	return &Service{store: st, files: files, clock: clock}
}

func (s *Service) lock(botID, name string) func() { return s.locks.Lock(botID + "\x00" + name) }

// TableInput is the body of createTable, getOrCreateTable and updateTable;
// nil fields are unchanged (updates) or defaults (creation).
type TableInput struct {
	Name             *string           `json:"name"`
	Factor           *float64          `json:"factor"`
	Frozen           *bool             `json:"frozen"`
	KeyColumn        json.RawMessage   `json:"keyColumn"` // a column name, or null: none
	Schema           json.RawMessage   `json:"schema"`
	Tags             map[string]string `json:"tags"`
	IsComputeEnabled *bool             `json:"isComputeEnabled"`
}

// View is a table with the number of its rows, when counted.
type View struct {
	platform.Table
	Rows int64
}

// TableJSON renders a table as the API returns it.
func TableJSON(t platform.Table) map[string]any {
	tags := t.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	out := map[string]any{"id": t.ID, "name": t.Name, "factor": t.Factor, "frozen": t.Frozen, "keyColumn": nil,
		"schema": json.RawMessage(t.Schema), "tags": tags, "isComputeEnabled": t.ComputeEnabled,
		"createdAt": platform.FormatTime(t.CreatedAt), "updatedAt": platform.FormatTime(t.UpdatedAt)}
	if t.KeyColumn != "" {
		out["keyColumn"] = t.KeyColumn
	}
	return out
}

func checkName(name string) error {
	if !nameRe.MatchString(name) || len(name) > MaxTableName {
		return platform.Invalid("name", "table names have 1 to %d letters, digits or _, and do not start with a digit", MaxTableName)
	}
	return nil
}

// keyColumn reads a keyColumn field: a column of t (kept as strings,
// numbers or dates), or null.
func keyColumn(t platform.Table, raw json.RawMessage) (string, error) {
	if string(raw) == "null" {
		return "", nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return "", platform.Invalid("keyColumn", "must be a column name or null")
	}
	for _, c := range t.Columns {
		if c.Name == name {
			if c.Type == platform.ColumnJSON || c.Type == platform.ColumnBoolean {
				return "", platform.Invalid("keyColumn", "column %q holds %s values; a key column holds strings, numbers or dates", name, c.Type)
			}
			return name, nil
		}
	}
	return "", platform.Invalid("keyColumn", "table has no column %q", name)
}

func factor(raw *float64, old int) (int, error) {
	if raw == nil {
		return max(old, 1), nil
	}
	f := *raw
	if f != float64(int(f)) || f < 1 || f > MaxFactor {
		return 0, platform.Invalid("factor", "must be a whole number from 1 to %d", MaxFactor)
	}
	if int(f) < old {
		return 0, platform.Invalid("factor", "can only grow (it is %d)", old)
	}
	return int(f), nil
}

// CreateTable creates a table of the bot (409 AlreadyExists when the bot
// has one of that name).
func (s *Service) CreateTable(ctx context.Context, botID string, in TableInput) (View, error) {
	if in.Name == nil {
		return View{}, platform.Invalid("name", "is required")
	}
	if err := checkName(*in.Name); err != nil {
		return View{}, err
	}
	defer s.lock(botID, *in.Name)()
	return s.create(ctx, botID, *in.Name, in)
}

func (s *Service) create(ctx context.Context, botID, name string, in TableInput) (View, error) {
	if len(in.Schema) == 0 {
		return View{}, platform.Invalid("schema", "is required")
	}
	if err := platform.CheckTags("tags", in.Tags); err != nil {
		return View{}, err
	}
	now := s.clock.Now()
	t := platform.Table{ID: platform.NewID("tbl_"), BotID: botID, Name: name, Tags: in.Tags, CreatedAt: now, UpdatedAt: now, Version: 1}
	if t.Tags == nil {
		t.Tags = map[string]string{}
	}
	ps, err := parseSchema(in.Schema)
	if err != nil {
		return View{}, err
	}
	if _, err := applySchema(&t, ps); err != nil {
		return View{}, err
	}
	if err := checkSchema(t); err != nil {
		return View{}, err
	}
	if t.Factor, err = factor(in.Factor, 1); err != nil {
		return View{}, err
	}
	if in.KeyColumn != nil {
		if t.KeyColumn, err = keyColumn(t, in.KeyColumn); err != nil {
			return View{}, err
		}
	}
	t.Frozen = in.Frozen != nil && *in.Frozen
	t.ComputeEnabled = in.IsComputeEnabled != nil && *in.IsComputeEnabled
	if err := s.store.CreateTable(ctx, t); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			return View{}, platform.Errorf(platform.TypeAlreadyExists, "name: the bot already has a table %q", name)
		}
		return View{}, err
	}
	return View{Table: t}, nil
}

// Table returns a table of the bot by id or name, with its row count.
func (s *Service) Table(ctx context.Context, botID, idOrName string) (View, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return View{}, err
	}
	n, err := s.store.CountTableRows(ctx, t)
	return View{t, n}, err
}

func (s *Service) table(ctx context.Context, botID, idOrName string) (platform.Table, error) {
	t, err := s.store.GetTable(ctx, botID, idOrName)
	if errors.Is(err, platform.ErrNotFound) {
		return t, platform.NotFound("table", idOrName)
	}
	return t, err
}

// GetOrCreateTable returns the bot's table of that name, or creates it.
func (s *Service) GetOrCreateTable(ctx context.Context, botID, name string, in TableInput) (View, bool, error) {
	if err := checkName(name); err != nil {
		return View{}, false, err
	}
	defer s.lock(botID, name)()
	if v, err := s.Table(ctx, botID, name); err == nil {
		return v, false, nil
	} else if e, ok := platform.AsError(err); !ok || e.Type != platform.TypeResourceNotFound {
		return View{}, false, err
	}
	v, err := s.create(ctx, botID, name, in)
	return v, err == nil, err
}

// ListTables lists the bot's tables, oldest first.
func (s *Service) ListTables(ctx context.Context, botID string, tags map[string][]string) ([]platform.Table, error) {
	return s.store.ListTables(ctx, botID, tags)
}

// UpdateTable changes a table: its name and schema (unless frozen; columns
// may be added, not removed or retyped), key column, factor (only up),
// tags (merged; an empty value removes one), frozen, compute.
func (s *Service) UpdateTable(ctx context.Context, botID, idOrName string, in TableInput) (View, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return View{}, err
	}
	defer s.lock(botID, t.Name)()
	if t, err = s.table(ctx, botID, t.ID); err != nil { // as of the lock
		return View{}, err
	}
	if t.Frozen && (in.Name != nil && *in.Name != t.Name || len(in.Schema) > 0) {
		return View{}, platform.Invalid("schema", "table %q is frozen: its name and schema cannot change (duplicate it instead)", t.Name)
	}
	if in.Name != nil && *in.Name != t.Name {
		if err := checkName(*in.Name); err != nil {
			return View{}, err
		}
		t.Name = *in.Name
	}
	var added []platform.TableColumn
	if len(in.Schema) > 0 {
		ps, err := parseSchema(in.Schema)
		if err != nil {
			return View{}, err
		}
		if added, err = applySchema(&t, ps); err != nil {
			return View{}, err
		}
		if err := checkSchema(t); err != nil {
			return View{}, err
		}
	}
	if in.KeyColumn != nil {
		if t.KeyColumn, err = keyColumn(t, in.KeyColumn); err != nil {
			return View{}, err
		}
	}
	if t.Factor, err = factor(in.Factor, t.Factor); err != nil {
		return View{}, err
	}
	if in.Frozen != nil {
		t.Frozen = *in.Frozen
	}
	if in.IsComputeEnabled != nil {
		t.ComputeEnabled = *in.IsComputeEnabled
	}
	if in.Tags != nil {
		if err := platform.CheckTags("tags", in.Tags); err != nil {
			return View{}, err
		}
		for k, v := range in.Tags {
			if v == "" {
				delete(t.Tags, k)
			} else {
				t.Tags[k] = v
			}
		}
	}
	t.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateTable(ctx, t, added); err != nil {
		switch {
		case errors.Is(err, platform.ErrConflict) && in.KeyColumn != nil:
			return View{}, platform.Errorf(platform.TypeInvalidPayload, "keyColumn: column %q has duplicate values; a key column's values must be unique", t.KeyColumn)
		case errors.Is(err, platform.ErrConflict):
			return View{}, platform.Errorf(platform.TypeAlreadyExists, "name: the bot already has a table %q", t.Name)
		}
		return View{}, err
	}
	t.Version++
	return View{Table: t}, nil
}

// RenameColumn renames a column of a table that is not frozen.
func (s *Service) RenameColumn(ctx context.Context, botID, idOrName, name, newName string) (View, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return View{}, err
	}
	defer s.lock(botID, t.Name)()
	if t, err = s.table(ctx, botID, t.ID); err != nil {
		return View{}, err
	}
	if t.Frozen {
		return View{}, platform.Invalid("name", "table %q is frozen: its columns cannot be renamed", t.Name)
	}
	if !nameRe.MatchString(newName) || len(newName) > MaxColumnName || reserved[newName] {
		return View{}, platform.Invalid("newName", "column names have 1 to %d letters, digits or _, do not start with a digit, and are not id, createdAt, updatedAt, computed, stale or similarity", MaxColumnName)
	}
	found := false
	for i, c := range t.Columns {
		if c.Name == newName {
			return View{}, platform.Invalid("newName", "table %q already has a column %q", t.Name, newName)
		}
		if c.Name == name {
			t.Columns[i].Name, found = newName, true
		}
	}
	if !found {
		return View{}, platform.Invalid("name", "table %q has no column %q", t.Name, name)
	}
	var doc map[string]any
	_ = json.Unmarshal(t.Schema, &doc)
	props, _ := doc["properties"].(map[string]any)
	props[newName] = props[name]
	delete(props, name)
	if req, ok := doc["required"].([]any); ok {
		for i, r := range req {
			if r == name {
				req[i] = newName
			}
		}
	}
	t.Schema, _ = json.Marshal(doc)
	if t.KeyColumn == name {
		t.KeyColumn = newName
	}
	t.UpdatedAt = s.clock.Now()
	if err := s.store.UpdateTable(ctx, t, nil); err != nil {
		return View{}, err
	}
	t.Version++
	return View{Table: t}, nil
}

// DeleteTable deletes a table with its rows.
func (s *Service) DeleteTable(ctx context.Context, botID, idOrName string) error {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return err
	}
	err = s.store.DeleteTable(ctx, t)
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("table", idOrName)
	}
	return err
}

// DuplicateTable copies a table (its rows too, unless schemaOnly) under a
// new name (default: the source's with "Copy" appended).
func (s *Service) DuplicateTable(ctx context.Context, botID, source string, name *string, schemaOnly bool, f *float64) (View, error) {
	src, err := s.table(ctx, botID, source)
	if err != nil {
		return View{}, err
	}
	newName := src.Name + "Copy"
	if name != nil {
		newName = *name
	}
	if err := checkName(newName); err != nil {
		return View{}, err
	}
	fac, err := factor(f, 1)
	if f == nil {
		fac = src.Factor
	} else if err != nil {
		return View{}, err
	}
	defer s.lock(botID, newName)()
	now := s.clock.Now()
	// The copy has the source's columns, database columns included, so
	// that rows copy as they are.
	t := src
	t.ID, t.Name, t.Factor, t.Version, t.CreatedAt, t.UpdatedAt = platform.NewID("tbl_"), newName, fac, 1, now, now
	t.Columns = append([]platform.TableColumn(nil), src.Columns...)
	t.Tags = map[string]string{}
	for k, v := range src.Tags {
		t.Tags[k] = v
	}
	if err := s.store.CreateTable(ctx, t); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			return View{}, platform.Errorf(platform.TypeAlreadyExists, "tableName: the bot already has a table %q", newName)
		}
		return View{}, err
	}
	v := View{Table: t}
	if !schemaOnly {
		n, err := s.store.CountTableRows(ctx, src)
		if err != nil {
			return View{}, err
		}
		if err := s.roomFor(ctx, v.Table, int(n)); err != nil {
			_ = s.store.DeleteTable(ctx, v.Table)
			return View{}, err
		}
		if err := s.store.CopyTableRows(ctx, src, v.Table); err != nil {
			return View{}, err
		}
		if v.Rows, err = s.store.CountTableRows(ctx, v.Table); err != nil {
			return View{}, err
		}
	}
	return v, nil
}

// rows reads the rows of a write (1 to MaxRowsPerOp) to a table of the
// bot, each with read.
func (s *Service) rows(ctx context.Context, botID, idOrName string, raw []json.RawMessage,
	read func(t platform.Table, field string, r json.RawMessage) (platform.TableRow, error)) (platform.Table, []platform.TableRow, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return t, nil, err
	}
	if len(raw) == 0 || len(raw) > MaxRowsPerOp {
		return t, nil, platform.Invalid("rows", "give 1 to %d rows (got %d)", MaxRowsPerOp, len(raw))
	}
	rows := make([]platform.TableRow, len(raw))
	for i, r := range raw {
		if rows[i], err = read(t, fmt.Sprintf("rows[%d]", i), r); err != nil {
			return t, nil, err
		}
	}
	return t, rows, nil
}

// taken turns the store's ErrConflict on a write into the key column's error.
func taken(t platform.Table, err error) error {
	if errors.Is(err, platform.ErrConflict) {
		return platform.Errorf(platform.TypeInvalidPayload, "rows: a value of key column %q is already taken", t.KeyColumn)
	}
	return err
}

// CreateRows inserts rows checked against the table's schema.
func (s *Service) CreateRows(ctx context.Context, botID, idOrName string, raw []json.RawMessage) (platform.Table, []platform.TableRow, error) {
	now := s.clock.Now()
	t, rows, err := s.rows(ctx, botID, idOrName, raw, func(t platform.Table, field string, r json.RawMessage) (platform.TableRow, error) {
		vals, err := rowValues(t, field, r, false)
		return platform.TableRow{Values: vals, CreatedAt: now, UpdatedAt: now}, err
	})
	if err != nil {
		return t, nil, err
	}
	if err := s.roomFor(ctx, t, len(rows)); err != nil {
		return t, nil, err
	}
	out, err := s.store.InsertTableRows(ctx, t, rows)
	return t, out, taken(t, err)
}

// rowID reads a row's id from a write.
func rowID(field string, raw json.RawMessage) (int64, error) {
	var r struct {
		ID *float64 `json:"id"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.ID == nil || *r.ID != float64(int64(*r.ID)) || *r.ID < 1 {
		return 0, platform.Invalid(field+".id", "is required: the id of the row to update")
	}
	return int64(*r.ID), nil
}

// UpdateRows sets the given columns of rows found by id.
func (s *Service) UpdateRows(ctx context.Context, botID, idOrName string, raw []json.RawMessage) (platform.Table, []platform.TableRow, error) {
	now := s.clock.Now()
	t, rows, err := s.rows(ctx, botID, idOrName, raw, func(t platform.Table, field string, r json.RawMessage) (platform.TableRow, error) {
		id, err := rowID(field, r)
		if err != nil {
			return platform.TableRow{}, err
		}
		vals, err := rowValues(t, field, r, true)
		return platform.TableRow{ID: id, Values: vals, UpdatedAt: now}, err
	})
	if err != nil {
		return t, nil, err
	}
	out, err := s.store.UpdateTableRows(ctx, t, rows)
	if errors.Is(err, platform.ErrNotFound) {
		return t, nil, platform.Errorf(platform.TypeResourceNotFound, "rows: a row to update does not exist in table %q", t.Name)
	}
	return t, out, taken(t, err)
}

// UpsertRows updates the rows whose key column value (keyColumn, else the
// table's) exists and inserts the others.
func (s *Service) UpsertRows(ctx context.Context, botID, idOrName, key string, raw []json.RawMessage) (platform.Table, []platform.TableRow, []platform.TableRow, error) {
	now := s.clock.Now()
	seen := map[string]bool{}
	t, rows, err := s.rows(ctx, botID, idOrName, raw, func(t platform.Table, field string, r json.RawMessage) (platform.TableRow, error) {
		if key == "" {
			key = t.KeyColumn
		}
		if key == "" {
			return platform.TableRow{}, platform.Invalid("keyColumn", "is required: table %q has no key column", t.Name)
		}
		kraw, _ := json.Marshal(key)
		if _, err := keyColumn(t, kraw); err != nil {
			return platform.TableRow{}, err
		}
		vals, err := rowValues(t, field, r, false)
		if err != nil {
			return platform.TableRow{}, err
		}
		kv, ok := vals[key]
		if !ok || kv == nil {
			return platform.TableRow{}, platform.Invalid(field+"."+key, "is required: it is the key of the upsert")
		}
		if k := fmt.Sprint(kv); seen[k] {
			return platform.TableRow{}, platform.Invalid(field+"."+key, "value %v appears twice in rows", kv)
		} else {
			seen[k] = true
		}
		return platform.TableRow{Values: vals, CreatedAt: now, UpdatedAt: now}, nil
	})
	if err != nil {
		return t, nil, nil, err
	}
	if err := s.roomFor(ctx, t, len(rows)); err != nil { // at most all are new
		return t, nil, nil, err
	}
	ins, upd, err := s.store.UpsertTableRows(ctx, t, key, rows)
	return t, ins, upd, taken(t, err)
}

// Row returns one row by id.
func (s *Service) Row(ctx context.Context, botID, idOrName string, id int64) (platform.Table, platform.TableRow, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return t, platform.TableRow{}, err
	}
	rows, _, err := s.store.FindTableRows(ctx, t, store.TableQuery{Where: &store.Cond{Column: "id", Op: "eq", Value: id}, Limit: 1})
	if err != nil {
		return t, platform.TableRow{}, err
	}
	if len(rows) == 0 {
		return t, platform.TableRow{}, platform.NotFound("row", fmt.Sprint(id))
	}
	return t, rows[0], nil
}

// FindInput is the body of findTableRows.
type FindInput struct {
	Limit          *float64        `json:"limit"`
	Offset         *float64        `json:"offset"`
	Filter         json.RawMessage `json:"filter"`
	Group          json.RawMessage `json:"group"`
	Search         string          `json:"search"`
	Select         []string        `json:"select"`
	OrderBy        string          `json:"orderBy"`
	OrderDirection string          `json:"orderDirection"`
}

// Found is the result of findTableRows.
type Found struct {
	Table         platform.Table
	Rows          []platform.TableRow
	Similarity    []float64        // with search: each row's
	Groups        []map[string]any // with group: one per group, instead of Rows
	HasMore       bool
	Offset, Limit int
	Select        []string
}

// FindRows finds rows by filter, in order, a page at a time; with search,
// the rows whose searchable columns hold the most of its words come first.
func (s *Service) FindRows(ctx context.Context, botID, idOrName string, in FindInput) (Found, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return Found{}, err
	}
	f := Found{Table: t, Limit: DefaultLimit, Select: in.Select}
	if in.Limit != nil {
		if *in.Limit != float64(int(*in.Limit)) || *in.Limit < 1 || *in.Limit > MaxFindLimit {
			return f, platform.Invalid("limit", "must be a whole number from 1 to %d", MaxFindLimit)
		}
		f.Limit = int(*in.Limit)
	}
	if in.Offset != nil {
		if *in.Offset != float64(int(*in.Offset)) || *in.Offset < 0 {
			return f, platform.Invalid("offset", "must be a whole number, at least 0")
		}
		f.Offset = int(*in.Offset)
	}
	for _, sel := range in.Select {
		col, _, _ := strings.Cut(sel, ".")
		if _, err := resolve(t, "select", col); err != nil {
			return f, err
		}
	}
	q := store.TableQuery{OrderBy: in.OrderBy, Desc: in.OrderDirection == "desc", Limit: f.Limit, Offset: f.Offset}
	switch in.OrderDirection {
	case "", "asc", "desc":
	default:
		return f, platform.Invalid("orderDirection", "must be asc or desc")
	}
	switch in.OrderBy {
	case "", "id", "createdAt", "updatedAt":
	default:
		tg, err := resolve(t, "orderBy", in.OrderBy)
		if err != nil {
			return f, err
		}
		if tg.kind == platform.ColumnJSON || tg.kind == "nested" {
			return f, platform.Invalid("orderBy", "column %q holds JSON: order by a column of strings, numbers, booleans or dates", in.OrderBy)
		}
	}
	if q.Where, err = parseFilter(t, "filter", in.Filter); err != nil {
		return f, err
	}
	if len(in.Group) > 0 && string(in.Group) != "null" {
		if in.Search != "" {
			return f, platform.Invalid("group", "give group or search, not both")
		}
		aggs, err := parseGroup(t, in.Group)
		if err != nil {
			return f, err
		}
		f.Groups, f.HasMore, err = s.store.GroupTableRows(ctx, t, q, aggs)
		return f, err
	}
	if in.Search != "" {
		return s.search(ctx, t, q, in.Search, f)
	}
	f.Rows, f.HasMore, err = s.store.FindTableRows(ctx, t, q)
	return f, err
}

// maxSearched bounds the rows one search ranks.
const maxSearched = 10_000

// search ranks the rows the filter keeps by the share of the search's words
// their searchable columns (all text columns when none is marked) hold.
func (s *Service) search(ctx context.Context, t platform.Table, q store.TableQuery, text string, f Found) (Found, error) {
	words := strings.Fields(strings.ToLower(text))
	var cols []platform.TableColumn
	for _, c := range t.Columns {
		if c.Searchable {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		for _, c := range t.Columns {
			if c.Type == platform.ColumnString || c.Type == platform.ColumnJSON {
				cols = append(cols, c)
			}
		}
	}
	q.Limit, q.Offset = maxSearched, 0
	rows, _, err := s.store.FindTableRows(ctx, t, q)
	if err != nil {
		return f, err
	}
	type scored struct {
		row   platform.TableRow
		score float64
	}
	all := make([]scored, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		for _, c := range cols {
			switch v := r.Values[c.Name].(type) {
			case string:
				b.WriteString(strings.ToLower(v) + " ")
			case json.RawMessage:
				b.WriteString(strings.ToLower(string(v)) + " ")
			}
		}
		hay, hit := b.String(), 0
		for _, w := range words {
			if strings.Contains(hay, w) {
				hit++
			}
		}
		all = append(all, scored{r, float64(hit) / float64(max(len(words), 1))})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	if f.Offset < len(all) {
		all = all[f.Offset:]
	} else {
		all = nil
	}
	f.HasMore = len(all) > f.Limit
	if f.HasMore {
		all = all[:f.Limit]
	}
	for _, x := range all {
		f.Rows = append(f.Rows, x.row)
		f.Similarity = append(f.Similarity, x.score)
	}
	return f, nil
}

// DeleteInput is the body of deleteTableRows: ids, a filter, or all.
type DeleteInput struct {
	IDs           []float64       `json:"ids"`
	Filter        json.RawMessage `json:"filter"`
	DeleteAllRows bool            `json:"deleteAllRows"`
}

// DeleteRows deletes rows by id, by filter, or all of them; exactly one.
func (s *Service) DeleteRows(ctx context.Context, botID, idOrName string, in DeleteInput) (int64, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return 0, err
	}
	given := 0
	for _, b := range []bool{len(in.IDs) > 0, len(in.Filter) > 0 && string(in.Filter) != "null", in.DeleteAllRows} {
		if b {
			given++
		}
	}
	if given != 1 {
		return 0, platform.Invalid("ids", "give exactly one of ids, filter or deleteAllRows: true")
	}
	if len(in.IDs) > MaxRowsPerOp {
		return 0, platform.Invalid("ids", "at most %d ids", MaxRowsPerOp)
	}
	ids := make([]int64, len(in.IDs))
	for i, id := range in.IDs {
		if id != float64(int64(id)) {
			return 0, platform.Invalid(fmt.Sprintf("ids[%d]", i), "row ids are whole numbers")
		}
		ids[i] = int64(id)
	}
	where, err := parseFilter(t, "filter", in.Filter)
	if err != nil {
		return 0, err
	}
	// A filter built from an empty search must not empty the table.
	if where != nil && matchesAll(*where) {
		return 0, platform.Invalid("filter", "matches every row whatever it holds; to delete them all, send deleteAllRows: true")
	}
	return s.store.DeleteTableRows(ctx, t, ids, where, in.DeleteAllRows)
}

// aggregates are the figures group may ask of a column, and the kinds of
// column each applies to.
var aggregates = map[string]func(kind string) bool{
	"key":   func(k string) bool { return k != platform.ColumnJSON },
	"count": func(string) bool { return true },
	"avg":   func(k string) bool { return k == platform.ColumnNumber },
	"sum":   func(k string) bool { return k == platform.ColumnNumber },
	"min": func(k string) bool {
		return k == platform.ColumnNumber || k == platform.ColumnString || k == platform.ColumnDate
	},
	"max": func(k string) bool {
		return k == platform.ColumnNumber || k == platform.ColumnString || k == platform.ColumnDate
	},
}

// parseGroup reads findTableRows' group: {column: "key" | aggregate |
// [aggregates]}. Each figure is answered as the column's name and the
// aggregate's, capitalized: {"city": "key", "age": ["avg", "max"]} gives
// groups {cityKey, ageAvg, ageMax}.
func parseGroup(t platform.Table, raw json.RawMessage) ([]store.Aggregate, error) {
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &spec); err != nil || len(spec) == 0 {
		return nil, platform.Invalid("group", `must map columns to "key" or aggregates (avg, max, min, sum, count)`)
	}
	var out []store.Aggregate
	for _, col := range sortedKeys(spec) {
		at := "group." + col
		var ops []string
		if err := json.Unmarshal(spec[col], &ops); err != nil {
			var one string
			if err := json.Unmarshal(spec[col], &one); err != nil {
				return nil, platform.Invalid(at, `must be "key", an aggregate or a list of them`)
			}
			ops = []string{one}
		}
		var c *platform.TableColumn
		for i := range t.Columns {
			if t.Columns[i].Name == col {
				c = &t.Columns[i]
			}
		}
		if c == nil {
			return nil, platform.Invalid(at, "table %q has no column %q", t.Name, col)
		}
		for _, op := range ops {
			ok, known := aggregates[op]
			if !known {
				return nil, platform.Invalid(at, "unknown aggregate %q (key, avg, max, min, sum, count)", op)
			}
			if !ok(c.Type) {
				return nil, platform.Invalid(at, "%s does not apply to column %q, which holds %s values", op, col, c.Type)
			}
			out = append(out, store.Aggregate{Column: col, Op: op, As: col + strings.ToUpper(op[:1]) + op[1:]})
		}
	}
	return out, nil
}

// QuotaTableRows is the quota of table rows, as the Admin API names it.
const QuotaTableRows = "table_row_count"

// Quota returns the workspace's table rows limit (its plan's) and how many
// it uses, each row counted its table's factor times.
func (s *Service) Quota(ctx context.Context, workspaceID string) (limit, used int64, err error) {
	ws, err := s.store.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return 0, 0, err
	}
	used, err = s.store.CountWorkspaceTableRows(ctx, workspaceID)
	return plans.Of(ws.Plan).MaxTableRows, used, err
}

// roomFor refuses a write of n new rows to t that would take the bot's
// workspace past its table rows quota. Writes that run at once may pass it
// by what they write together.
func (s *Service) roomFor(ctx context.Context, t platform.Table, n int) error {
	ws, err := s.store.GetBotWorkspace(ctx, t.BotID)
	if err != nil {
		return err
	}
	limit, used, err := s.Quota(ctx, ws)
	if err != nil {
		return err
	}
	if add := int64(n) * int64(t.Factor); used+add > limit {
		return platform.Errorf(platform.TypeQuotaExceeded, "%s: the workspace's tables hold %d rows (each counted its table's factor); %d more would pass its quota of %d",
			QuotaTableRows, used, add, limit)
	}
	return nil
}
