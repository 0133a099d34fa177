package tables

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/botplatform/botplatform/internal/platform"
)

// DeployTables creates or migrates the tables a bot declares when it is
// deployed (updateBot's tables, which `bp deploy` sends): a table that does
// not exist is created; one that exists gets the columns the declaration
// adds (and its tags, factor, key column). A column the declaration no
// longer has is kept, rows and all, until the user removes the table; a
// table left out, or declared null, is kept too. Errors name the field
// (tables.NAME.schema…).
func (s *Service) DeployTables(ctx context.Context, botID string, declared map[string]json.RawMessage) error {
	names := make([]string, 0, len(declared))
	for name := range declared {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		raw := declared[name]
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		if err := s.deployTable(ctx, botID, name, raw); err != nil {
			if e, ok := platform.AsError(err); ok {
				return platform.Errorf(e.Type, "tables.%s.%s", name, e.Message)
			}
			return fmt.Errorf("tables.%s: %w", name, err)
		}
	}
	return nil
}

func (s *Service) deployTable(ctx context.Context, botID, name string, raw json.RawMessage) error {
	var in TableInput
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return platform.Invalid("", "must be {schema, tags?, factor?, keyColumn?, frozen?, isComputeEnabled?}: %v", err)
	}
	if in.Name != nil {
		return platform.Invalid("name", "is the declaration's key; leave it out")
	}
	_, created, err := s.GetOrCreateTable(ctx, botID, name, in)
	if err != nil || created {
		return err
	}
	t, err := s.table(ctx, botID, name)
	if err != nil {
		return err
	}
	if in.Schema, err = keepColumns(t, in.Schema); err != nil {
		return err
	}
	if t.Frozen && !schemaAdds(t, in.Schema) {
		in.Schema = nil // nothing to change: a frozen table stays as it is
	}
	_, err = s.UpdateTable(ctx, botID, t.ID, in)
	return err
}

// keepColumns is a declared schema with the table's columns it leaves out
// appended, as the table has them.
func keepColumns(t platform.Table, declared json.RawMessage) (json.RawMessage, error) {
	if len(declared) == 0 {
		return nil, nil
	}
	want, err := parseSchema(declared)
	if err != nil {
		return nil, err
	}
	have, err := parseSchema(t.Schema)
	if err != nil {
		return nil, fmt.Errorf("table %s's stored schema: %w", t.Name, err)
	}
	for _, name := range have.names {
		if _, ok := want.props[name]; !ok {
			want.names = append(want.names, name)
			want.props[name] = have.props[name]
		}
	}
	return want.marshal()
}

// schemaAdds tells whether schema has a column t lacks.
func schemaAdds(t platform.Table, schema json.RawMessage) bool {
	ps, err := parseSchema(schema)
	if err != nil {
		return true // let UpdateTable say what is wrong
	}
	for _, name := range ps.names {
		if !slices.ContainsFunc(t.Columns, func(c platform.TableColumn) bool { return c.Name == name }) {
			return true
		}
	}
	return false
}

// marshal writes the schema back as JSON, its columns in order.
func (p parsedSchema) marshal() (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, name := range p.names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.props[name])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`}`)
	if len(p.required) > 0 {
		r, err := json.Marshal(p.required)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`}`)
	return b.Bytes(), nil
}
