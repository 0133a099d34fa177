package tables

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// parseFilter reads a MongoDB-like filter ({col: value}, {col: {$op: v}},
// $and, $or, $not; nested values of JSON columns by dot path) into a
// condition checked against the table's columns: unknown columns, bad
// operators and values of the wrong type are refused naming where.
func parseFilter(t platform.Table, field string, raw json.RawMessage) (*store.Cond, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, platform.Invalid(field, "must be an object")
	}
	p := &filterParser{t: t, field: field}
	c, err := p.object(field, obj)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Bounds of a filter: every term is a bound value of the SQL it becomes
// (SQLite takes at most 32,766), and a condition each row is tested by.
const (
	MaxFilterList  = 1000 // values of one $in or $nin list
	MaxFilterTerms = 2000 // comparisons, listed values and empty filters, in all
)

// filterParser reads one filter, counting its terms.
type filterParser struct {
	t     platform.Table
	field string // the filter's own field, named when it is too big
	terms int
}

// count adds n terms, refusing the filter past MaxFilterTerms.
func (p *filterParser) count(n int) error {
	if p.terms += n; p.terms > MaxFilterTerms {
		return platform.Invalid(p.field, "at most %d conditions and values (each comparison, each value of a $in or $nin list and each empty filter {} counts one)", MaxFilterTerms)
	}
	return nil
}

// matchesAll tells whether c keeps every row whatever it holds: {}, or
// made of {} by $and and $or.
func matchesAll(c store.Cond) bool {
	switch {
	case c.And != nil:
		return !slices.ContainsFunc(c.And, func(c store.Cond) bool { return !matchesAll(c) })
	case c.Or != nil:
		return slices.ContainsFunc(c.Or, matchesAll)
	}
	return false
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// object reads a filter object. The empty one keeps every row, as in
// MongoDB: an empty $and, never a condition without a column.
func (p *filterParser) object(field string, obj map[string]json.RawMessage) (store.Cond, error) {
	if len(obj) == 0 {
		return store.Cond{And: []store.Cond{}}, p.count(1)
	}
	var and []store.Cond
	for _, key := range sortedKeys(obj) {
		v := obj[key]
		at := field + "." + key
		switch key {
		case "$and", "$or":
			var parts []map[string]json.RawMessage
			if err := json.Unmarshal(v, &parts); err != nil {
				return store.Cond{}, platform.Invalid(at, "must be a list of filters")
			}
			sub := make([]store.Cond, 0, len(parts))
			for i, part := range parts {
				if part == nil {
					return store.Cond{}, platform.Invalid(fmt.Sprintf("%s[%d]", at, i), "must be a filter")
				}
				c, err := p.object(fmt.Sprintf("%s[%d]", at, i), part)
				if err != nil {
					return store.Cond{}, err
				}
				sub = append(sub, c)
			}
			if key == "$and" {
				and = append(and, store.Cond{And: sub})
			} else {
				and = append(and, store.Cond{Or: sub})
			}
		case "$not":
			var not map[string]json.RawMessage
			if err := json.Unmarshal(v, &not); err != nil || not == nil {
				return store.Cond{}, platform.Invalid(at, "must be a filter")
			}
			c, err := p.object(at, not)
			if err != nil {
				return store.Cond{}, err
			}
			and = append(and, store.Cond{Not: &c})
		default:
			if strings.HasPrefix(key, "$") {
				return store.Cond{}, platform.Invalid(at, "unknown operator %q (at this level: $and, $or, $not, or a column)", key)
			}
			c, err := p.fieldFilter(at, key, v)
			if err != nil {
				return store.Cond{}, err
			}
			and = append(and, c)
		}
	}
	if len(and) == 1 {
		return and[0], nil
	}
	return store.Cond{And: and}, nil
}

// target is what a field filter tests: a column (or a built-in) and a path
// inside it, with the kind of value it holds.
type target struct {
	column string
	path   []string
	kind   string
}

func resolve(t platform.Table, at, key string) (target, error) {
	col, rest, _ := strings.Cut(key, ".")
	switch col {
	case "id":
		if rest == "" {
			return target{column: "id", kind: "id"}, nil
		}
	case "createdAt", "updatedAt":
		if rest == "" {
			return target{column: col, kind: "time"}, nil
		}
	}
	for _, c := range t.Columns {
		if c.Name != col {
			continue
		}
		if rest == "" {
			return target{column: col, kind: c.Type}, nil
		}
		if c.Type != platform.ColumnJSON {
			return target{}, platform.Invalid(at, "column %q holds %s values: there is nothing inside", col, c.Type)
		}
		return target{column: col, path: strings.Split(rest, "."), kind: "nested"}, nil
	}
	return target{}, platform.Invalid(at, "table %q has no column %q", t.Name, col)
}

var operators = map[string]string{"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte",
	"$in": "in", "$nin": "nin", "$exists": "exists", "$regex": "regex"}

func (p *filterParser) fieldFilter(at, key string, v json.RawMessage) (store.Cond, error) {
	tg, err := resolve(p.t, at, key)
	if err != nil {
		return store.Cond{}, err
	}
	var ops map[string]json.RawMessage
	if json.Unmarshal(v, &ops) == nil && len(ops) > 0 && isOperators(ops) {
		var and []store.Cond
		flags := ""
		if o, ok := ops["$options"]; ok {
			if err := json.Unmarshal(o, &flags); err != nil || strings.Trim(flags, "i") != "" {
				return store.Cond{}, platform.Invalid(at+".$options", `must be "i" or ""`)
			}
			if _, ok := ops["$regex"]; !ok {
				return store.Cond{}, platform.Invalid(at+".$options", "goes with $regex")
			}
		}
		for _, name := range sortedKeys(ops) {
			if name == "$options" {
				continue
			}
			if name == "$not" {
				var inner map[string]json.RawMessage
				if err := json.Unmarshal(ops[name], &inner); err != nil || !isOperators(inner) {
					return store.Cond{}, platform.Invalid(at+".$not", "must hold operators, e.g. {\"$not\": {\"$gt\": 3}}")
				}
				c, err := p.fieldFilter(at+".$not", key, ops[name])
				if err != nil {
					return store.Cond{}, err
				}
				and = append(and, store.Cond{Not: &c})
				continue
			}
			op, ok := operators[name]
			if !ok {
				return store.Cond{}, platform.Invalid(at, "unknown operator %q (known: $eq $ne $gt $gte $lt $lte $in $nin $exists $regex $options $not)", name)
			}
			c, err := p.comparison(tg, at+"."+name, op, ops[name])
			if err != nil {
				return store.Cond{}, err
			}
			c.Flags = flags
			and = append(and, c)
		}
		if len(and) == 1 {
			return and[0], nil
		}
		return store.Cond{And: and}, nil
	}
	return p.comparison(tg, at, "eq", v)
}

func isOperators(m map[string]json.RawMessage) bool {
	for k := range m {
		if !strings.HasPrefix(k, "$") {
			return false
		}
	}
	return true
}

func (p *filterParser) comparison(tg target, at, op string, raw json.RawMessage) (store.Cond, error) {
	c := store.Cond{Column: tg.column, Path: tg.path, Op: op}
	if err := p.count(1); err != nil {
		return c, err
	}
	switch op {
	case "exists":
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return c, platform.Invalid(at, "must be true or false")
		}
		c.Value = b
		return c, nil
	case "regex":
		var p string
		if err := json.Unmarshal(raw, &p); err != nil {
			return c, platform.Invalid(at, "must be a string")
		}
		if tg.kind != platform.ColumnString && tg.kind != platform.ColumnDate && tg.kind != "nested" {
			return c, platform.Invalid(at, "applies to text; column %q holds %s values", tg.column, tg.kind)
		}
		if _, err := regexp.Compile(p); err != nil {
			return c, platform.Invalid(at, "not a regular expression: %v", err)
		}
		c.Value = p
		return c, nil
	case "in", "nin":
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return c, platform.Invalid(at, "must be a list")
		}
		if len(list) > MaxFilterList {
			return c, platform.Invalid(at, "at most %d values (got %d)", MaxFilterList, len(list))
		}
		if err := p.count(len(list)); err != nil {
			return c, err
		}
		vals := make([]any, len(list))
		for i, x := range list {
			v, err := filterValue(tg, fmt.Sprintf("%s[%d]", at, i), x)
			if err != nil {
				return c, err
			}
			vals[i] = v
		}
		c.Value = vals
		return c, nil
	}
	v, err := filterValue(tg, at, raw)
	if err != nil {
		return c, err
	}
	if v == nil && op != "eq" && op != "ne" {
		return c, platform.Invalid(at, "null only compares with $eq or $ne")
	}
	if b, ok := v.(bool); ok && op != "eq" && op != "ne" {
		return c, platform.Invalid(at, "true and false only compare with $eq or $ne (not %v)", b)
	}
	c.Value = v
	return c, nil
}

// filterValue reads a filter value for a target: of the column's type (a
// date column takes ISO 8601 strings; createdAt and updatedAt too).
func filterValue(tg target, at string, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, platform.Invalid(at, "not a JSON value")
	}
	switch tg.kind {
	case platform.ColumnString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, platform.Invalid(at, "column %q holds strings", tg.column)
	case platform.ColumnNumber:
		if f, ok := v.(float64); ok {
			return f, nil
		}
		return nil, platform.Invalid(at, "column %q holds numbers", tg.column)
	case "id":
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			return int64(f), nil
		}
		return nil, platform.Invalid(at, "row ids are whole numbers")
	case platform.ColumnBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, platform.Invalid(at, "column %q holds true or false", tg.column)
	case platform.ColumnDate, "time":
		s, ok := v.(string)
		tm, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil {
			return nil, platform.Invalid(at, "%q holds dates: give an ISO 8601 date-time", tg.column)
		}
		if tg.kind == "time" {
			return tm.UnixMicro(), nil
		}
		return tm.UTC().Format(dateLayout), nil
	case "nested":
		switch v.(type) {
		case string, float64, bool:
			return v, nil
		}
		return nil, platform.Invalid(at, "compare values inside a column with a string, a number, true or false")
	}
	return nil, platform.Invalid(at, "column %q holds JSON: filter on a value inside it (%s.key)", tg.column, tg.column)
}
