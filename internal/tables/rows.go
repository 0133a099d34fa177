package tables

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
)

// dateLayout is how date columns keep their values: one width, so that text
// order is time order.
const dateLayout = "2006-01-02T15:04:05.000Z"

// compiled caches each table version's compiled schema.
var compiled sync.Map // table id + version -> *jsonschema.Schema

// rowSchema is the table's row schema; partial (for updates) leaves out
// its required list.
func rowSchema(t platform.Table, partial bool) (*jsonschema.Schema, error) {
	key := fmt.Sprintf("%s@%d/%v", t.ID, t.Version, partial)
	if v, ok := compiled.Load(key); ok {
		return v.(*jsonschema.Schema), nil
	}
	src := []byte(t.Schema)
	if partial {
		var doc map[string]any
		_ = json.Unmarshal(t.Schema, &doc)
		delete(doc, "required")
		src, _ = json.Marshal(doc)
	}
	sch, err := jsonbody.CompileUser("table-"+t.ID+".json", src)
	if err != nil {
		return nil, platform.Errorf(platform.TypeInvalidJSONSchema, "the schema of table %q is not a valid JSON Schema: %v", t.Name, err)
	}
	compiled.Store(key, sch)
	return sch, nil
}

// CheckSchema compiles a schema, so that a table is never created with one
// that cannot check its rows.
func checkSchema(t platform.Table) error {
	_, err := jsonbody.CompileUser("table-check.json", t.Schema)
	if err != nil {
		return platform.Errorf(platform.TypeInvalidJSONSchema, "schema: not a valid JSON Schema: %v", err)
	}
	return nil
}

// rowValues checks one row of a write against the table's schema (partial:
// required columns are not required) and returns its values by column;
// other keys are ignored, as the API documents.
func rowValues(t platform.Table, field string, raw json.RawMessage, partial bool) (map[string]any, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, platform.Invalid(field, "must be an object")
	}
	sch, err := rowSchema(t, partial)
	if err != nil {
		return nil, err
	}
	// A null clears a column: only what is given is checked, and a
	// required column may not be cleared.
	check := map[string]json.RawMessage{}
	for k, v := range obj {
		if string(v) == "null" {
			if slices.Contains(required(t), k) {
				return nil, platform.Invalid(field+"."+k, "is required: it cannot be null")
			}
			continue
		}
		check[k] = v
	}
	body, _ := json.Marshal(check)
	if err := jsonbody.Check(body, sch); err != nil {
		var e *platform.Error
		if errors.As(err, &e) {
			return nil, platform.Invalid(field, "%s", e.Message)
		}
		return nil, err
	}
	size := 0
	vals := map[string]any{}
	for _, c := range t.Columns {
		v, ok := obj[c.Name]
		if !ok {
			continue
		}
		size += len(v)
		if string(v) == "null" {
			vals[c.Name] = nil
			continue
		}
		val, err := decodeValue(c, field+"."+c.Name, v)
		if err != nil {
			return nil, err
		}
		vals[c.Name] = val
	}
	if limit := t.Factor * RowBytes; size > limit {
		return nil, platform.Invalid(field, "the row holds %d bytes; at most %d (the table's factor %d × 4 KB)", size, limit, t.Factor)
	}
	return vals, nil
}

// decodeValue reads a column's JSON value as the store keeps it.
func decodeValue(c platform.TableColumn, field string, v json.RawMessage) (any, error) {
	switch c.Type {
	case platform.ColumnString:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, platform.Invalid(field, "must be a string")
		}
		return s, nil
	case platform.ColumnDate:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, platform.Invalid(field, "must be an ISO 8601 date-time string")
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, platform.Invalid(field, "must be an ISO 8601 date-time string")
		}
		return tm.UTC().Format(dateLayout), nil
	case platform.ColumnNumber:
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return nil, platform.Invalid(field, "must be a number")
		}
		return f, nil
	case platform.ColumnBoolean:
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, platform.Invalid(field, "must be true or false")
		}
		return b, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, platform.Invalid(field, "must be JSON")
	}
	return json.RawMessage(buf.Bytes()), nil
}

// RowJSON renders a row as the API returns it: its columns, its id and
// dates, and its (empty: no computed columns here) computed state. With
// sel, only the selected columns (dot paths reach inside JSON columns).
func RowJSON(t platform.Table, r platform.TableRow, sel []string) map[string]any {
	out := map[string]any{"id": r.ID, "createdAt": platform.FormatTime(r.CreatedAt), "updatedAt": platform.FormatTime(r.UpdatedAt),
		"computed": map[string]any{}, "stale": []string{}}
	if sel == nil {
		for _, c := range t.Columns {
			out[c.Name] = r.Values[c.Name]
		}
		return out
	}
	for _, path := range sel {
		col, rest, _ := strings.Cut(path, ".")
		v, ok := r.Values[col]
		if !ok {
			continue
		}
		if rest == "" {
			out[col] = v
			continue
		}
		raw, _ := v.(json.RawMessage)
		var doc any
		if json.Unmarshal(raw, &doc) != nil {
			continue
		}
		if got, ok := dig(doc, strings.Split(rest, ".")); ok {
			dst, _ := out[col].(map[string]any)
			if dst == nil {
				dst = map[string]any{}
				out[col] = dst
			}
			put(dst, strings.Split(rest, "."), got)
		}
	}
	return out
}

func dig(v any, keys []string) (any, bool) {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func put(m map[string]any, keys []string, v any) {
	for _, k := range keys[:len(keys)-1] {
		next, _ := m[k].(map[string]any)
		if next == nil {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

// required lists a table's required columns.
func required(t platform.Table) []string {
	var doc struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.Schema, &doc)
	return doc.Required
}
