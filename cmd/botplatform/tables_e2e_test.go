package main

// The Tables API end-to-end, with a bot API key, on each database.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestTables(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"tables", testTablesLifecycle},
		{"rows", testTableRows},
		{"find", testTableFind},
		{"bad_input", testTablesBadInput},
		{"filter_edges", testTableFilterEdges},
		{"other_bots", testTablesOtherBots},
		{"export_import", testTablesExportImport},
		{"quota", testTablesQuota},
	})
}

func (e rtEnv) tbl(method, path string, body any) *response {
	e.t.Helper()
	return e.rt.do(method, "/v1/tables"+path, body)
}

var peopleSchema = map[string]any{"type": "object", "properties": map[string]any{
	"name":   map[string]any{"type": "string", "x-zui": map[string]any{"searchable": true}},
	"age":    map[string]any{"type": "number"},
	"vip":    map[string]any{"type": "boolean"},
	"born":   map[string]any{"type": "string", "format": "date-time"},
	"extra":  map[string]any{"type": "object"},
	"email":  map[string]any{"type": "string"},
	"joined": map[string]any{"type": "string"},
}, "required": []string{"name"}}

func (e rtEnv) people(name string) string {
	e.t.Helper()
	r := e.tbl(http.MethodPost, "", map[string]any{"name": name, "schema": peopleSchema, "keyColumn": "email", "tags": map[string]any{"team": "a"}}).ok()
	return str(e.t, r, "table", "id")
}

func testTablesLifecycle(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	id := e.people("PeopleTable")
	tb := field(t, e.tbl(http.MethodGet, "/"+id, nil).ok(), "table").(map[string]any)
	if tb["name"] != "PeopleTable" || tb["keyColumn"] != "email" || tb["factor"] != 1.0 || tb["frozen"] != false {
		t.Errorf("getTable: %v", tb)
	}
	if idx := field(t, tb, "schema", "properties", "born", "x-zui", "index"); idx != 1.0 { // the columns as sent: age, born, …
		t.Errorf("the born column's x-zui index: %v, want 1", idx)
	}
	byName := e.tbl(http.MethodGet, "/PeopleTable", nil).ok()
	if str(t, byName, "table", "id") != id || byName["rows"] != 0.0 {
		t.Errorf("getTable by name: %v", byName)
	}
	got := e.tbl(http.MethodPost, "/PeopleTable", map[string]any{"schema": peopleSchema}).ok()
	if got["created"] != false || str(t, got, "table", "id") != id {
		t.Errorf("getOrCreateTable of an existing table: %v", got)
	}
	made := e.tbl(http.MethodPost, "/OtherTable", map[string]any{"schema": map[string]any{"properties": map[string]any{"x": map[string]any{"type": "number"}}}}).ok()
	if made["created"] != true {
		t.Errorf("getOrCreateTable of a new table: %v", made)
	}
	list := field(t, e.tbl(http.MethodGet, "", nil).ok(), "tables").([]any)
	if len(list) != 2 {
		t.Errorf("listTables: %v", list)
	}
	if l := field(t, e.tbl(http.MethodGet, "?tags.team=a", nil).ok(), "tables").([]any); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Errorf("listTables by tag: %v", l)
	}

	// A column is added; a row written before it reads it as null.
	e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": []any{map[string]any{"name": "Ada", "email": "ada@x"}}}).ok()
	more := map[string]any{"type": "object", "properties": map[string]any{}}
	for k, v := range peopleSchema["properties"].(map[string]any) {
		more["properties"].(map[string]any)[k] = v
	}
	more["properties"].(map[string]any)["city"] = map[string]any{"type": "string"}
	up := field(t, e.tbl(http.MethodPut, "/"+id, map[string]any{"schema": more, "factor": 2, "tags": map[string]any{"team": "", "x": "1"}}).ok(), "table").(map[string]any)
	if up["factor"] != 2.0 || field(t, up, "schema", "properties", "city") == nil {
		t.Errorf("updateTable: %v", up)
	}
	wantEqual(t, up["tags"], map[string]any{"x": "1"}, "tags after updateTable")
	rows := field(t, e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{}).ok(), "rows").([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["city"] != nil || rows[0].(map[string]any)["name"] != "Ada" {
		t.Errorf("rows after a column was added: %v", rows)
	}
	e.tbl(http.MethodPut, "/"+id, map[string]any{"factor": 1}).fail(400, "InvalidPayload", "factor")
	e.tbl(http.MethodPut, "/"+id, map[string]any{"schema": peopleSchema}).fail(400, "InvalidPayload", "city")

	// Renaming a column keeps its values.
	ren := field(t, e.tbl(http.MethodPut, "/"+id+"/column", map[string]any{"name": "city", "newName": "town"}).ok(), "table").(map[string]any)
	if field(t, ren, "schema", "properties", "town") == nil {
		t.Errorf("renameTableColumn: %v", ren)
	}
	e.tbl(http.MethodPut, "/"+id+"/rows", map[string]any{"rows": []any{map[string]any{"id": rows[0].(map[string]any)["id"], "town": "Paris"}}}).ok()
	if got := field(t, e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"filter": map[string]any{"town": "Paris"}}).ok(), "rows").([]any); len(got) != 1 {
		t.Errorf("find by the renamed column: %v", got)
	}

	// Duplicate, with and without rows; freeze.
	dup := e.tbl(http.MethodPost, "/"+id+"/duplicate", map[string]any{"tableName": "CopyTable"}).ok()
	dupID := str(t, dup, "table", "id")
	if n := e.tbl(http.MethodGet, "/"+dupID, nil).ok()["rows"]; n != 1.0 || dup["rows"] != 1.0 {
		t.Errorf("the duplicate has %v rows, its answer says %v; want 1", n, dup["rows"])
	}
	emptyDup := e.tbl(http.MethodPost, "/"+id+"/duplicate", map[string]any{"tableName": "EmptyTable", "schemaOnly": true}).ok()
	if emptyDup["rows"] != 0.0 {
		t.Errorf("a schema-only duplicate's answer counts %v rows, want 0", emptyDup["rows"])
	}
	empty := str(t, emptyDup, "table", "id")
	if n := e.tbl(http.MethodGet, "/"+empty, nil).ok()["rows"]; n != 0.0 {
		t.Errorf("a schema-only duplicate has %v rows", n)
	}
	e.tbl(http.MethodPut, "/"+dupID, map[string]any{"frozen": true}).ok()
	e.tbl(http.MethodPut, "/"+dupID, map[string]any{"name": "Renamed"}).fail(400, "InvalidPayload", "frozen")
	e.tbl(http.MethodPut, "/"+dupID+"/column", map[string]any{"name": "town", "newName": "place"}).fail(400, "InvalidPayload", "frozen")

	e.tbl(http.MethodDelete, "/"+id, nil).ok()
	e.tbl(http.MethodGet, "/"+id, nil).fail(404, "ResourceNotFound", id)
	e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{}).fail(404, "ResourceNotFound")
	if n := e.tbl(http.MethodGet, "/"+dupID, nil).ok()["rows"]; n != 1.0 {
		t.Errorf("the duplicate lost its rows with its source: %v", n)
	}
	// Deleting the bot drops its tables.
	e.admin.del("/v1/admin/bots/" + e.botID).ok()
}

func testTableRows(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	id := e.people("RowsTable")
	created := field(t, e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": []any{
		map[string]any{"name": "Ada", "age": 36, "vip": true, "born": "1815-12-10T00:00:00+01:00", "extra": map[string]any{"lang": "en"}, "email": "ada@x", "ignored": 1},
		map[string]any{"name": "Bob", "email": "bob@x"},
	}}).ok(), "rows").([]any)
	if len(created) != 2 {
		t.Fatalf("createTableRows: %v", created)
	}
	ada := created[0].(map[string]any)
	if ada["age"] != 36.0 || ada["vip"] != true || ada["born"] != "1815-12-09T23:00:00.000Z" || ada["ignored"] != nil || ada["createdAt"] == nil {
		t.Errorf("a created row: %v", ada)
	}
	wantEqual(t, ada["extra"], map[string]any{"lang": "en"}, "a JSON column")
	wantEqual(t, ada["computed"], map[string]any{}, "computed")
	adaID := int64(ada["id"].(float64))
	got := field(t, e.tbl(http.MethodGet, fmt.Sprintf("/%s/row?id=%d", id, adaID), nil).ok(), "row")
	wantEqual(t, got, ada, "getTableRow")
	e.tbl(http.MethodGet, "/"+id+"/row?id=999999", nil).fail(404, "ResourceNotFound")

	// update: only the given columns change.
	upd := field(t, e.tbl(http.MethodPut, "/"+id+"/rows", map[string]any{"rows": []any{map[string]any{"id": adaID, "age": 37, "extra": nil}}}).ok(), "rows").([]any)
	u := upd[0].(map[string]any)
	if u["age"] != 37.0 || u["name"] != "Ada" || u["extra"] != nil || u["updatedAt"] == ada["updatedAt"] && false {
		t.Errorf("updateTableRows: %v", u)
	}
	e.tbl(http.MethodPut, "/"+id+"/rows", map[string]any{"rows": []any{map[string]any{"id": 999999, "age": 1}}}).fail(404, "ResourceNotFound")

	// upsert by the key column: one updated, one inserted.
	up := e.tbl(http.MethodPost, "/"+id+"/rows/upsert", map[string]any{"rows": []any{
		map[string]any{"name": "Ada L.", "email": "ada@x"}, map[string]any{"name": "Cy", "email": "cy@x"},
	}}).ok()
	ins, updd := up["inserted"].([]any), up["updated"].([]any)
	if len(ins) != 1 || len(updd) != 1 || updd[0].(map[string]any)["id"] != ada["id"] || updd[0].(map[string]any)["name"] != "Ada L." {
		t.Errorf("upsertTableRows: %v", up)
	}
	// The key column's values are unique.
	e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": []any{map[string]any{"name": "Dup", "email": "bob@x"}}}).fail(400, "InvalidPayload", "email")

	// delete by ids, by filter, all.
	if n := e.tbl(http.MethodPost, "/"+id+"/rows/delete", map[string]any{"ids": []any{adaID}}).ok()["deletedRows"]; n != 1.0 {
		t.Errorf("delete by id: %v", n)
	}
	if n := e.tbl(http.MethodPost, "/"+id+"/rows/delete", map[string]any{"filter": map[string]any{"name": "Cy"}}).ok()["deletedRows"]; n != 1.0 {
		t.Errorf("delete by filter: %v", n)
	}
	if n := e.tbl(http.MethodPost, "/"+id+"/rows/delete", map[string]any{"deleteAllRows": true}).ok()["deletedRows"]; n != 1.0 {
		t.Errorf("delete all: %v", n)
	}
	e.tbl(http.MethodPost, "/"+id+"/rows/delete", map[string]any{}).fail(400, "InvalidPayload", "ids")
}

func testTableFind(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	id := e.people("FindTable")
	var rows []any
	for i := range 30 {
		rows = append(rows, map[string]any{"name": fmt.Sprintf("person %02d", i), "age": float64(i), "vip": i%3 == 0,
			"email": fmt.Sprintf("p%d@x", i), "extra": map[string]any{"level": i % 5, "tag": fmt.Sprintf("t%d", i%2)},
			"born": fmt.Sprintf("2000-01-%02dT00:00:00Z", i+1)})
	}
	e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": rows}).ok()
	find := func(body map[string]any) []string {
		t.Helper()
		r := e.tbl(http.MethodPost, "/"+id+"/rows/find", body).ok()
		var names []string
		for _, row := range r["rows"].([]any) {
			names = append(names, fmt.Sprint(row.(map[string]any)["name"]))
		}
		return names
	}
	names := func(is ...int) []string {
		var out []string
		for _, i := range is {
			out = append(out, fmt.Sprintf("person %02d", i))
		}
		return out
	}
	for _, c := range []struct {
		what string
		body map[string]any
		want []string
	}{
		{"$gt and $lte, by age desc", map[string]any{"filter": map[string]any{"age": map[string]any{"$gt": 25, "$lte": 28}}, "orderBy": "age", "orderDirection": "desc"}, names(28, 27, 26)},
		{"$in", map[string]any{"filter": map[string]any{"age": map[string]any{"$in": []any{1, 2, 40}}}}, names(1, 2)},
		{"equality on a boolean, limit and offset", map[string]any{"filter": map[string]any{"vip": true}, "limit": 2, "offset": 1}, names(3, 6)},
		{"$or", map[string]any{"filter": map[string]any{"$or": []any{map[string]any{"age": 0}, map[string]any{"name": "person 29"}}}}, names(0, 29)},
		{"$and with $ne", map[string]any{"filter": map[string]any{"$and": []any{map[string]any{"age": map[string]any{"$lt": 4}}, map[string]any{"age": map[string]any{"$ne": 2}}}}}, names(0, 1, 3)},
		{"$not", map[string]any{"filter": map[string]any{"$not": map[string]any{"age": map[string]any{"$gte": 2}}}}, names(0, 1)},
		{"field $not", map[string]any{"filter": map[string]any{"age": map[string]any{"$not": map[string]any{"$gte": 2}}}}, names(0, 1)},
		{"$nin", map[string]any{"filter": map[string]any{"age": map[string]any{"$nin": []any{0, 1}, "$lt": 4}}}, names(2, 3)},
		{"$regex", map[string]any{"filter": map[string]any{"name": map[string]any{"$regex": "^PERSON 1[0-2]$", "$options": "i"}}}, names(10, 11, 12)},
		{"nested value", map[string]any{"filter": map[string]any{"extra.level": 4, "extra.tag": "t0"}}, names(4, 14, 24)},
		{"nested comparison", map[string]any{"filter": map[string]any{"extra.level": map[string]any{"$gte": 4}, "age": map[string]any{"$lt": 10}}}, names(4, 9)},
		{"$exists on a value inside", map[string]any{"filter": map[string]any{"extra.none": map[string]any{"$exists": true}}}, nil},
		{"dates", map[string]any{"filter": map[string]any{"born": map[string]any{"$gte": "2000-01-29T00:00:00Z"}}}, names(28, 29)},
		{"by createdAt", map[string]any{"filter": map[string]any{"createdAt": map[string]any{"$gt": "2000-01-01T00:00:00Z"}, "age": map[string]any{"$lt": 2}}}, names(0, 1)},
	} {
		if got := find(c.body); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	page := e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"limit": 10, "offset": 25}).ok()
	if page["hasMore"] != false || page["limit"] != 10.0 || page["offset"] != 25.0 || len(page["rows"].([]any)) != 5 {
		t.Errorf("the last page: %v", page)
	}
	if e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"limit": 10}).ok()["hasMore"] != true {
		t.Errorf("a first page has no more")
	}
	sel := e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"select": []any{"name", "extra.tag"}, "filter": map[string]any{"age": 3}}).ok()
	row := sel["rows"].([]any)[0].(map[string]any)
	if row["name"] != "person 03" || row["age"] != nil || row["id"] == nil {
		t.Errorf("select: %v", row)
	}
	wantEqual(t, row["extra"], map[string]any{"tag": "t1"}, "a selected value inside a column")
	groups := e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"group": map[string]any{"vip": "key", "age": []any{"avg", "max", "count"}}}).ok()
	wantEqual(t, groups["rows"], []any{
		map[string]any{"vipKey": false, "ageAvg": 15, "ageMax": 29, "ageCount": 20},
		map[string]any{"vipKey": true, "ageAvg": 13.5, "ageMax": 27, "ageCount": 10},
	}, "findTableRows grouped by vip")
	filtered := e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"filter": map[string]any{"age": map[string]any{"$lt": 3}},
		"group": map[string]any{"age": "sum", "name": "min"}}).ok()
	wantEqual(t, filtered["rows"], []any{map[string]any{"ageSum": 3, "nameMin": "person 00"}}, "a filtered group of all rows")
	srch := e.tbl(http.MethodPost, "/"+id+"/rows/find", map[string]any{"search": "person 07", "limit": 2}).ok()
	top := srch["rows"].([]any)[0].(map[string]any)
	if top["name"] != "person 07" || top["similarity"] != 1.0 {
		t.Errorf("search: %v", srch["rows"])
	}
}

func testTablesBadInput(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	id := e.people("BadTable")
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		typ, mention string
	}{
		{http.MethodPost, "", map[string]any{"name": "BadTable", "schema": peopleSchema}, 409, "AlreadyExists", "BadTable"},
		{http.MethodPost, "", map[string]any{"name": "1bad", "schema": peopleSchema}, 400, "InvalidPayload", "name"},
		{http.MethodPost, "", map[string]any{"name": "NoSchema"}, 400, "InvalidPayload", "schema"},
		{http.MethodPost, "", map[string]any{"name": "T", "schema": map[string]any{"properties": map[string]any{"id": map[string]any{"type": "string"}}}}, 400, "InvalidPayload", "id"},
		{http.MethodPost, "", map[string]any{"name": "T", "schema": map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string", "pattern": "("}}}}, 400, "InvalidJsonSchema", "schema"},
		{http.MethodPost, "", map[string]any{"name": "T", "schema": peopleSchema, "keyColumn": "extra"}, 400, "InvalidPayload", "keyColumn"},
		{http.MethodPost, "/" + id + "/rows", map[string]any{"rows": []any{map[string]any{"age": 3}}}, 400, "InvalidPayload", "name"},
		{http.MethodPost, "/" + id + "/rows", map[string]any{"rows": []any{map[string]any{"name": "x", "age": "old"}}}, 400, "InvalidPayload", "age"},
		{http.MethodPost, "/" + id + "/rows", map[string]any{"rows": []any{map[string]any{"name": "x", "born": "yesterday"}}}, 400, "InvalidPayload", "born"},
		{http.MethodPost, "/" + id + "/rows", map[string]any{"rows": []any{}}, 400, "InvalidPayload", "rows"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"nope": 1}}, 400, "InvalidPayload", "nope"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"age": map[string]any{"$near": 1}}}, 400, "InvalidPayload", "$near"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"age": "ten"}}, 400, "InvalidPayload", "age"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"$or": map[string]any{}}}, 400, "InvalidPayload", "$or"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"name": map[string]any{"$regex": "("}}}, 400, "InvalidPayload", "$regex"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"age": map[string]any{"$regex": "1"}}}, 400, "InvalidPayload", "age"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"filter": map[string]any{"age.x": 1}}, 400, "InvalidPayload", "age"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"orderBy": "extra"}, 400, "InvalidPayload", "orderBy"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"limit": 0}, 400, "InvalidPayload", "limit"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"group": map[string]any{"age": "median"}}, 400, "InvalidPayload", "median"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"group": map[string]any{"extra": "avg"}}, 400, "InvalidPayload", "extra"},
		{http.MethodPost, "/" + id + "/rows/find", map[string]any{"group": map[string]any{"nope": "key"}}, 400, "InvalidPayload", "nope"},
		{http.MethodPost, "/" + id + "/rows/upsert", map[string]any{"rows": []any{map[string]any{"name": "x"}}}, 400, "InvalidPayload", "email"},
		{http.MethodGet, "/" + id + "/row?id=abc", nil, 400, "InvalidQuery", "id"},
		{http.MethodGet, "/NoSuchTable", nil, 404, "ResourceNotFound", "NoSuchTable"},
	} {
		e.tbl(c.method, c.path, c.body).fail(c.status, c.typ, c.mention)
	}
	if n := e.tbl(http.MethodGet, "/"+id, nil).ok()["rows"]; n != 0.0 {
		t.Errorf("rows after refused writes: %v", n)
	}
}

// testTableFilterEdges: an empty filter ({}) matches every row wherever it
// sits, as in MongoDB, and its negation none; lists and filters past their
// bounds are refused naming where, never a database error.
func testTableFilterEdges(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	id := e.people("EdgeTable")
	var rows []any
	for i := range 5 {
		rows = append(rows, map[string]any{"name": fmt.Sprintf("p%d", i), "age": i, "email": fmt.Sprintf("p%d@x", i), "extra": map[string]any{"n": i}})
	}
	e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": rows}).ok()
	find := func(filter string) string {
		t.Helper()
		r := e.tbl(http.MethodPost, "/"+id+"/rows/find", `{"filter":`+filter+`}`).ok()
		var names []string
		for _, row := range r["rows"].([]any) {
			names = append(names, fmt.Sprint(row.(map[string]any)["name"]))
		}
		return strings.Join(names, " ")
	}
	all := "p0 p1 p2 p3 p4"
	for _, c := range []struct{ filter, want string }{
		{`{}`, all},
		{`{"$and":[{}]}`, all},
		{`{"$or":[{}]}`, all},
		{`{"$or":[{},{"age":1}]}`, all},
		{`{"$not":{}}`, ""},
		{`{"$not":{"$and":[{}]}}`, ""},
		{`{"$and":[{"$and":[{"$or":[{"$and":[{}]}]}]},{"age":{"$lt":2}}]}`, "p0 p1"},
		{`{"$and":[],"age":3}`, "p3"},
		{`{"$or":[]}`, ""},
		{`{"age":{"$in":[` + numbers(tables1000, 0) + `]}}`, all},
		{`{"extra.n":{"$nin":[` + numbers(tables1000, 1) + `]}}`, "p0"},
		// The most terms a filter may hold (the SQL's depth is sqlstore's TestFilterDepth).
		{`{"$or":[{"age":{"$in":[` + numbers(tables1000-1, 100) + `]}},{"age":{"$in":[` + numbers(tables1000-2, 4) + `]}},{"age":-1}]}`, "p4"},
	} {
		if got := find(c.filter); got != c.want {
			t.Errorf("filter %.80s: %q, want %q", c.filter, got, c.want)
		}
	}
	for _, c := range []struct{ filter, mention string }{
		{`{"age":{"$in":[` + numbers(tables1000+1, 0) + `]}}`, "filter.age.$in: at most 1000 values"},
		{`{"age":{"$in":[` + numbers(200_000, 0) + `]}}`, "filter.age.$in: at most 1000 values"},
		{`{"$and":[{"name":{"$nin":[` + strings.Repeat(`"x",`, 1000) + `"y"]}}]}`, "filter.$and[0].name.$nin: at most 1000 values"},
		{`{"$or":[` + strings.Repeat(`{"age":{"$in":[`+numbers(900, 0)+`]}},`, 3) + `{}]}`, "filter: at most 2000 conditions and values"},
		{`{"$or":[` + strings.Repeat(`{"age":1},`, 40_000) + `{}]}`, "filter: at most 2000 conditions and values"},
		{`{"$and":[{"age":1},null]}`, "filter.$and[1]: must be a filter"},
	} {
		e.tbl(http.MethodPost, "/"+id+"/rows/find", `{"filter":`+c.filter+`}`).fail(400, "InvalidPayload", c.mention)
		if len(c.filter) > 100_000 {
			continue // deleteTableRows reads its filter the same way; a huge one costs seconds under -race
		}
		e.tbl(http.MethodPost, "/"+id+"/rows/delete", `{"filter":`+c.filter+`}`).fail(400, "InvalidPayload", c.mention)
	}
	// Deleting every row takes deleteAllRows, not a filter that happens to
	// match them all.
	for _, f := range []string{`{}`, `{"$and":[{}]}`, `{"$or":[{"age":1},{}]}`} {
		e.tbl(http.MethodPost, "/"+id+"/rows/delete", `{"filter":`+f+`}`).fail(400, "InvalidPayload", "filter: matches every row", "deleteAllRows")
	}
	if n := e.tbl(http.MethodPost, "/"+id+"/rows/delete", `{"filter":{"$not":{}}}`).ok()["deletedRows"]; n != 0.0 {
		t.Errorf("deleting by {$not: {}} deleted %v rows", n)
	}
	if got := find(`{}`); got != all {
		t.Errorf("rows after refused deletes: %q", got)
	}
}

// tables1000 is the most values a $in or $nin list may hold.
const tables1000 = 1000

// numbers is n numbers from start, comma-separated.
func numbers(n, start int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(start + i))
	}
	return b.String()
}

func testTablesOtherBots(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	other := newRuntimeEnv(t, s)
	id := e.people("MineTable")
	e.tbl(http.MethodPost, "/"+id+"/rows", map[string]any{"rows": []any{map[string]any{"name": "secret", "email": "s@x"}}}).ok()
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/" + id, nil}, {http.MethodGet, "/MineTable", nil}, {http.MethodPut, "/" + id, map[string]any{"factor": 3}},
		{http.MethodDelete, "/" + id, nil}, {http.MethodPost, "/" + id + "/rows/find", map[string]any{}},
		{http.MethodPost, "/" + id + "/rows", map[string]any{"rows": []any{map[string]any{"name": "x"}}}},
		{http.MethodPost, "/" + id + "/rows/delete", map[string]any{"deleteAllRows": true}},
		{http.MethodGet, "/" + id + "/row?id=1", nil}, {http.MethodPost, "/" + id + "/duplicate", map[string]any{}},
	} {
		other.tbl(c.method, c.path, c.body).fail(404, "ResourceNotFound")
	}
	if l := field(t, other.tbl(http.MethodGet, "", nil).ok(), "tables").([]any); len(l) != 0 {
		t.Errorf("another bot lists %v", l)
	}
	// The other bot may have a table of the same name.
	other.people("MineTable")
	if n := e.tbl(http.MethodGet, "/"+id, nil).ok()["rows"]; n != 1.0 {
		t.Errorf("the table's rows after another bot's calls: %v", n)
	}
}

// testTablesExportImport: a table's rows go to a file of the Files API (CSV
// or gzipped JSON) and come back into another table; a file with a bad row
// imports nothing; jobs record both.
func testTablesExportImport(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	src := e.people("SourceTable")
	e.tbl(http.MethodPost, "/"+src+"/rows", map[string]any{"rows": []any{
		map[string]any{"name": "Ada, \"the first\"", "age": 36, "vip": true, "born": "1815-12-10T00:00:00Z", "extra": map[string]any{"k": []any{1, 2}}, "email": "ada@x"},
		map[string]any{"name": "Bob", "age": 2.5, "email": "bob@x"},
		map[string]any{"name": "Cy", "vip": false, "email": "cy@x"},
	}}).ok()
	csvJob := field(t, e.tbl(http.MethodGet, "/"+src+"/export?format=csv", nil).ok(), "job").(map[string]any)
	if csvJob["status"] != "completed" || csvJob["type"] != "export" || csvJob["outputFileId"] == nil || csvJob["tableId"] != src {
		t.Fatalf("exportTable: %v", csvJob)
	}
	files := s.files(t, e.rt.c.token, e.botID)
	csvFile := files.getFile(csvJob["outputFileId"].(string))
	content := string(s.fetch(t, csvFile.URL).Body)
	lines := strings.Split(strings.TrimSpace(content), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "id,createdAt,updatedAt,") || !strings.Contains(content, `"Ada, ""the first"""`) {
		t.Errorf("the CSV export:\n%s", content)
	}
	jsonJob := field(t, e.tbl(http.MethodGet, "/"+src+"/export?format=json&compress=true", nil).ok(), "job").(map[string]any)
	gz := s.fetch(t, files.getFile(jsonJob["outputFileId"].(string)).URL).Body
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("the compressed export is not gzip: %v", err)
	}
	plain, _ := io.ReadAll(zr)
	var exported []map[string]any
	if err := json.Unmarshal(plain, &exported); err != nil || len(exported) != 3 || exported[1]["age"] != 2.5 {
		t.Errorf("the JSON export: %s", plain)
	}

	dst := e.people("DestTable")
	imp := field(t, e.tbl(http.MethodPost, "/"+dst+"/import", map[string]any{"fileId": csvJob["outputFileId"]}).ok(), "job").(map[string]any)
	if imp["status"] != "completed" || imp["inputFileId"] != csvJob["outputFileId"] {
		t.Errorf("importTable: %v", imp)
	}
	// Emails are the key column: the JSON file's rows would repeat them.
	e.tbl(http.MethodPut, "/"+dst, map[string]any{"keyColumn": nil}).ok()
	e.tbl(http.MethodPost, "/"+dst+"/import", map[string]any{"fileId": jsonJob["outputFileId"]}).ok()
	got := field(t, e.tbl(http.MethodPost, "/"+dst+"/rows/find", map[string]any{"orderBy": "id"}).ok(), "rows").([]any)
	if len(got) != 6 {
		t.Fatalf("rows after two imports: %d, want 6", len(got))
	}
	want := field(t, e.tbl(http.MethodPost, "/"+src+"/rows/find", map[string]any{"orderBy": "id"}).ok(), "rows").([]any)
	for i, row := range got {
		w := want[i%3].(map[string]any)
		for _, col := range []string{"name", "age", "vip", "born", "extra", "email"} {
			if fmt.Sprint(row.(map[string]any)[col]) != fmt.Sprint(w[col]) {
				t.Errorf("imported row %d, %s: %v, want %v", i, col, row.(map[string]any)[col], w[col])
			}
		}
	}

	bad := files.create(s, "bad.csv", []byte("name,age\nok,1\nnot ok,old\n"), map[string]any{"contentType": "text/csv"})
	e.tbl(http.MethodPost, "/"+dst+"/import", map[string]any{"fileId": bad.ID}).fail(400, "InvalidPayload", "row 2", "age")
	if n := e.tbl(http.MethodGet, "/"+dst, nil).ok()["rows"]; n != 6.0 {
		t.Errorf("rows after a refused import: %v, want 6", n)
	}
	jobs := field(t, e.tbl(http.MethodGet, "/"+dst+"/jobs", nil).ok(), "jobs").([]any)
	if len(jobs) != 3 || jobs[0].(map[string]any)["status"] != "failed" || jobs[2].(map[string]any)["status"] != "completed" {
		t.Errorf("getTableJobs: %v", jobs)
	}
	other := newRuntimeEnv(t, s)
	theirs := s.files(t, other.rt.c.token, other.botID).create(s, "theirs.csv", []byte("name\nx\n"), nil)
	e.tbl(http.MethodPost, "/"+dst+"/import", map[string]any{"fileId": theirs.ID}).fail(400, "ReferenceNotFound", "fileId")
	e.tbl(http.MethodGet, "/"+src+"/export?format=xml", nil).fail(400, "InvalidQuery", "format")
	other.tbl(http.MethodGet, "/"+src+"/export", nil).fail(404, "ResourceNotFound")
}

// testTablesQuota: the workspace's rows, each counted its table's factor
// times, are its table_row_count usage; a write past the plan's quota is
// refused whole.
func testTablesQuota(t *testing.T, s *testServer) {
	e := newRuntimeEnv(t, s)
	e.tbl(http.MethodPost, "", map[string]any{"name": "WideTable", "factor": 30, "schema": map[string]any{"properties": map[string]any{"n": map[string]any{"type": "number"}}}}).ok()
	batch := func(from int) []any {
		rows := make([]any, 1000)
		for i := range rows {
			rows[i] = map[string]any{"n": from + i}
		}
		return rows
	}
	for i := range 3 {
		e.tbl(http.MethodPost, "/WideTable/rows", map[string]any{"rows": batch(i * 1000)}).ok()
	}
	usage := field(t, e.admin.get("/v1/admin/workspaces/"+e.admin.ws+"/usages?type=table_row_count").ok(), "usages").([]any)[0].(map[string]any)
	if usage["value"] != 90000.0 || usage["quota"] != 100000.0 {
		t.Errorf("table_row_count usage: %v, want 90000 of 100000 (3,000 rows of factor 30)", usage)
	}
	e.tbl(http.MethodPost, "/WideTable/rows", map[string]any{"rows": batch(3000)}).fail(403, "QuotaExceeded", "table_row_count")
	if n := e.tbl(http.MethodGet, "/WideTable", nil).ok()["rows"]; n != 3000.0 {
		t.Errorf("rows after a refused write: %v, want 3000", n)
	}
	e.tbl(http.MethodPost, "/WideTable/duplicate", map[string]any{}).fail(403, "QuotaExceeded", "table_row_count")
	e.tbl(http.MethodGet, "/WideTableCopy", nil).fail(404, "ResourceNotFound")
	e.tbl(http.MethodPost, "/WideTable/rows", map[string]any{"rows": batch(3000)[:300]}).ok()
}
