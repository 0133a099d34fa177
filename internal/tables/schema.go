// Package tables holds the rules of the Tables API: a bot's tables, their
// column schemas, the rows checked against them, and the MongoDB-like
// filters of findTableRows, checked here and turned into SQL by the store.
package tables

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// Limits of tables.
const (
	MaxColumns    = 20
	MaxRowsPerOp  = 1000
	RowBytes      = 4 << 10 // per unit of factor
	MaxFactor     = 30
	MaxFindLimit  = 1000
	DefaultLimit  = 100
	MaxTableName  = 100
	MaxColumnName = 64
)

var (
	nameRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reserved = map[string]bool{"id": true, "createdAt": true, "updatedAt": true, "computed": true, "stale": true, "similarity": true}
)

// property is a column's entry in a table's JSON Schema.
type property map[string]any

// kind works out how a column keeps its values from its JSON Schema.
func kind(p property) string {
	t := p["type"]
	if list, ok := t.([]any); ok { // ["string", "null"]
		t = nil
		for _, x := range list {
			if x != "null" {
				t = x
				break
			}
		}
	}
	switch t {
	case "string":
		if p["format"] == "date-time" {
			return platform.ColumnDate
		}
		return platform.ColumnString
	case "number", "integer":
		return platform.ColumnNumber
	case "boolean":
		return platform.ColumnBoolean
	}
	return platform.ColumnJSON
}

// parsedSchema is a table schema as given: its columns in order.
type parsedSchema struct {
	names    []string
	props    map[string]property
	required []string
}

// parseSchema reads a table's schema: a JSON Schema of an object
// ({type: "object", properties, required}) or just its properties.
func parseSchema(raw json.RawMessage) (parsedSchema, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil || doc == nil {
		return parsedSchema{}, platform.Invalid("schema", "must be an object")
	}
	propsRaw := raw
	var required []string
	if p, ok := doc["properties"]; ok {
		propsRaw = p
		if r, ok := doc["required"]; ok {
			if err := json.Unmarshal(r, &required); err != nil {
				return parsedSchema{}, platform.Invalid("schema.required", "must be a list of column names")
			}
		}
	}
	// Keep the columns' order as written.
	dec := json.NewDecoder(strings.NewReader(string(propsRaw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return parsedSchema{}, platform.Invalid("schema.properties", "must be an object of columns")
	}
	out := parsedSchema{props: map[string]property{}, required: required}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, platform.Invalid("schema", "%v", err)
		}
		name := tok.(string)
		var p property
		if err := dec.Decode(&p); err != nil || p == nil {
			return out, platform.Invalid("schema.properties."+name, "must be a JSON Schema object")
		}
		if !nameRe.MatchString(name) || len(name) > MaxColumnName {
			return out, platform.Invalid("schema.properties."+name, "column names have 1 to %d letters, digits or _, and do not start with a digit", MaxColumnName)
		}
		if reserved[name] {
			return out, platform.Invalid("schema.properties."+name, "%q is a column every row has", name)
		}
		out.names = append(out.names, name)
		out.props[name] = p
	}
	if len(out.names) > MaxColumns {
		return out, platform.Invalid("schema", "at most %d columns (got %d)", MaxColumns, len(out.names))
	}
	for _, r := range required {
		if _, ok := out.props[r]; !ok {
			return out, platform.Invalid("schema.required", "%q is not a column", r)
		}
	}
	return out, nil
}

// searchable reports whether a column's x-zui marks it searchable.
func searchable(p property) bool {
	z, _ := p["x-zui"].(map[string]any)
	b, _ := z["searchable"].(bool)
	return b
}

// applySchema gives t the columns of s: existing ones keep their database
// column (a kind cannot change), new ones get the next; it returns the new
// ones. Columns left out of s are refused: a column's data is not dropped
// by omission.
func applySchema(t *platform.Table, s parsedSchema) ([]platform.TableColumn, error) {
	have := map[string]platform.TableColumn{}
	next := 0
	for _, c := range t.Columns {
		have[c.Name] = c
		if n, err := strconv.Atoi(strings.TrimPrefix(c.Phys, "c")); err == nil && n > next {
			next = n
		}
	}
	for name := range have {
		if _, ok := s.props[name]; !ok {
			return nil, platform.Invalid("schema", "column %q is missing: columns cannot be removed", name)
		}
	}
	var cols, added []platform.TableColumn
	for _, name := range s.names {
		p := s.props[name]
		k := kind(p)
		if c, ok := have[name]; ok {
			if c.Type != k {
				return nil, platform.Invalid("schema.properties."+name, "the column keeps %s values; its type cannot change", c.Type)
			}
			c.Searchable = searchable(p)
			cols = append(cols, c)
			continue
		}
		next++
		c := platform.TableColumn{Name: name, Phys: "c" + strconv.Itoa(next), Type: k, Searchable: searchable(p)}
		cols = append(cols, c)
		added = append(added, c)
	}
	t.Columns = cols
	// The schema as the API shows it: each column with its x-zui index.
	props := map[string]any{}
	for i, name := range s.names {
		p := property{}
		for k, v := range s.props[name] {
			p[k] = v
		}
		z, _ := p["x-zui"].(map[string]any)
		zz := map[string]any{}
		for k, v := range z {
			zz[k] = v
		}
		zz["index"] = i
		p["x-zui"] = zz
		props[name] = p
	}
	doc := map[string]any{"type": "object", "properties": props, "additionalProperties": true}
	if len(s.required) > 0 {
		req := append([]string(nil), s.required...)
		sort.Strings(req)
		doc["required"] = req
	}
	t.Schema, _ = json.Marshal(doc)
	return added, nil
}
