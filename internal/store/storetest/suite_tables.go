package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// The Tables API's store: tables whose rows live in database tables of
// their own, and the filters rendered as SQL.

func (e *env) newTable(botID, name string) platform.Table {
	now := e.now()
	return platform.Table{ID: platform.NewID("tbl_"), BotID: botID, Name: name, Schema: json.RawMessage(`{"type":"object"}`),
		Columns: []platform.TableColumn{{Name: "name", Phys: "c1", Type: platform.ColumnString}, {Name: "n", Phys: "c2", Type: platform.ColumnNumber},
			{Name: "ok", Phys: "c3", Type: platform.ColumnBoolean}, {Name: "doc", Phys: "c4", Type: platform.ColumnJSON}},
		KeyColumn: "name", Factor: 1, Tags: map[string]string{"k": "v"}, Version: 1, CreatedAt: now, UpdatedAt: now}
}

func testTables(t *testing.T, e *env) {
	b := e.chatBot(t)
	tb := e.newTable(b.ID, "T")
	must(t, e.s.CreateTable(e.ctx, tb), "CreateTable")
	wantErr(t, e.s.CreateTable(e.ctx, e.newTable(b.ID, "T")), platform.ErrConflict, "CreateTable of a taken name")
	for _, key := range []string{tb.ID, "T"} {
		got, err := e.s.GetTable(e.ctx, b.ID, key)
		must(t, err, "GetTable %s", key)
		if got.ID != tb.ID || len(got.Columns) != 4 || got.KeyColumn != "name" || got.Tags["k"] != "v" {
			t.Errorf("GetTable %s: %+v", key, got)
		}
	}
	if _, err := e.s.GetTable(e.ctx, e.chatBot(t).ID, tb.ID); err != platform.ErrNotFound {
		t.Errorf("another bot's GetTable: %v", err)
	}
	ts, err := e.s.ListTables(e.ctx, b.ID, map[string][]string{"k": {"v"}})
	must(t, err, "ListTables")
	if len(ts) != 1 {
		t.Errorf("ListTables by tag: %v", ts)
	}

	now := e.now()
	row := func(name string, n float64, ok bool, doc string) platform.TableRow {
		v := map[string]any{"name": name, "n": n, "ok": ok}
		if doc != "" {
			v["doc"] = json.RawMessage(doc)
		}
		return platform.TableRow{Values: v, CreatedAt: now, UpdatedAt: now}
	}
	rows, err := e.s.InsertTableRows(e.ctx, tb, []platform.TableRow{row("a", 1, true, `{"x":{"y":1}}`), row("b", 2, false, `{"x":{"y":"two"}}`), row("c", 3, true, "")})
	must(t, err, "InsertTableRows")
	if len(rows) != 3 || rows[0].Values["ok"] != true || rows[2].Values["doc"] != nil || rows[1].Values["n"] != 2.0 {
		t.Fatalf("inserted rows: %+v", rows)
	}
	if _, err := e.s.InsertTableRows(e.ctx, tb, []platform.TableRow{row("a", 9, true, "")}); err != platform.ErrConflict {
		t.Errorf("a taken key: %v", err)
	}
	find := func(c *store.Cond) []string {
		t.Helper()
		rs, _, err := e.s.FindTableRows(e.ctx, tb, store.TableQuery{Where: c, Limit: 10})
		must(t, err, "FindTableRows %+v", c)
		return mapSlice(rs, func(r platform.TableRow) string { return r.Values["name"].(string) })
	}
	same(t, find(&store.Cond{Column: "n", Op: "gte", Value: 2.0}), []string{"b", "c"}, "n >= 2")
	same(t, find(&store.Cond{Column: "ok", Op: "eq", Value: true}), []string{"a", "c"}, "ok")
	same(t, find(&store.Cond{Column: "doc", Path: []string{"x", "y"}, Op: "eq", Value: 1.0}), []string{"a"}, "doc.x.y = 1")
	same(t, find(&store.Cond{Column: "doc", Path: []string{"x", "y"}, Op: "eq", Value: "two"}), []string{"b"}, "doc.x.y = two")
	same(t, find(&store.Cond{Column: "doc", Op: "exists", Value: false}), []string{"c"}, "no doc")
	same(t, find(&store.Cond{Column: "n", Op: "ne", Value: 2.0}), []string{"a", "c"}, "n != 2")
	same(t, find(&store.Cond{Column: "name", Op: "nin", Value: []any{"a"}}), []string{"b", "c"}, "name not in a")
	same(t, find(&store.Cond{Or: []store.Cond{{Column: "name", Op: "regex", Value: "^A$", Flags: "i"}, {Not: &store.Cond{Column: "n", Op: "lt", Value: 3.0}}}}), []string{"a", "c"}, "name ~* ^a$ or not n < 3")
	groups, _, err := e.s.GroupTableRows(e.ctx, tb, store.TableQuery{Limit: 10}, []store.Aggregate{{Column: "ok", Op: "key", As: "okKey"},
		{Column: "n", Op: "sum", As: "nSum"}, {Column: "n", Op: "avg", As: "nAvg"}, {Column: "name", Op: "max", As: "nameMax"}, {Column: "doc", Op: "count", As: "docCount"}})
	must(t, err, "GroupTableRows")
	same(t, groups, []map[string]any{{"okKey": false, "nSum": 2.0, "nAvg": 2.0, "nameMax": "b", "docCount": 1.0},
		{"okKey": true, "nSum": 4.0, "nAvg": 2.0, "nameMax": "c", "docCount": 1.0}}, "groups by ok")
	rs, more, err := e.s.FindTableRows(e.ctx, tb, store.TableQuery{OrderBy: "n", Desc: true, Limit: 2, Offset: 0})
	must(t, err, "FindTableRows ordered")
	if len(rs) != 2 || !more || rs[0].Values["name"] != "c" {
		t.Errorf("ordered page: %+v, more %v", rs, more)
	}

	upd, err := e.s.UpdateTableRows(e.ctx, tb, []platform.TableRow{{ID: rows[0].ID, Values: map[string]any{"n": 10.0, "doc": nil}, UpdatedAt: now.Add(time.Second)}})
	must(t, err, "UpdateTableRows")
	if upd[0].Values["n"] != 10.0 || upd[0].Values["name"] != "a" || upd[0].Values["doc"] != nil || !upd[0].UpdatedAt.Equal(mt(now.Add(time.Second))) {
		t.Errorf("updated row: %+v", upd[0])
	}
	if _, err := e.s.UpdateTableRows(e.ctx, tb, []platform.TableRow{{ID: 99999, Values: map[string]any{"n": 1.0}, UpdatedAt: now}}); err != platform.ErrNotFound {
		t.Errorf("updating a missing row: %v", err)
	}
	ins, up, err := e.s.UpsertTableRows(e.ctx, tb, "name", []platform.TableRow{row("b", 20, true, ""), row("d", 4, false, "")})
	must(t, err, "UpsertTableRows")
	if len(ins) != 1 || len(up) != 1 || up[0].ID != rows[1].ID || up[0].Values["n"] != 20.0 || ins[0].Values["name"] != "d" {
		t.Errorf("upsert: inserted %+v, updated %+v", ins, up)
	}

	// A column is added; the key column changes.
	tb.Columns = append(tb.Columns, platform.TableColumn{Name: "when", Phys: "c5", Type: platform.ColumnDate})
	tb.KeyColumn, tb.UpdatedAt = "", e.now()
	must(t, e.s.UpdateTable(e.ctx, tb, tb.Columns[4:]), "UpdateTable")
	wantErr(t, e.s.UpdateTable(e.ctx, tb, nil), platform.ErrConflict, "UpdateTable over a stale version")
	tb.Version++
	if _, err := e.s.InsertTableRows(e.ctx, tb, []platform.TableRow{row("a", 0, true, "")}); err != nil {
		t.Errorf("a duplicate name once the key column is gone: %v", err)
	}
	n, err := e.s.CountTableRows(e.ctx, tb)
	must(t, err, "CountTableRows")
	same(t, n, int64(5), "rows")

	copyT := tb
	copyT.ID, copyT.Name, copyT.Version = platform.NewID("tbl_"), "Copy", 1
	must(t, e.s.CreateTable(e.ctx, copyT), "CreateTable (copy)")
	must(t, e.s.CopyTableRows(e.ctx, tb, copyT), "CopyTableRows")
	n, _ = e.s.CountTableRows(e.ctx, copyT)
	same(t, n, int64(5), "copied rows")
	total, err := e.s.CountWorkspaceTableRows(e.ctx, b.WorkspaceID)
	must(t, err, "CountWorkspaceTableRows")
	same(t, total, int64(10), "rows of the workspace's tables")

	del, err := e.s.DeleteTableRows(e.ctx, tb, nil, &store.Cond{Column: "name", Op: "eq", Value: "a"}, false)
	must(t, err, "DeleteTableRows by filter")
	same(t, del, int64(2), "deleted by filter")
	del, err = e.s.DeleteTableRows(e.ctx, tb, []int64{rows[2].ID}, nil, false)
	must(t, err, "DeleteTableRows by id")
	same(t, del, int64(1), "deleted by id")
	del, err = e.s.DeleteTableRows(e.ctx, tb, nil, nil, true)
	must(t, err, "DeleteTableRows all")
	same(t, del, int64(2), "deleted, all")

	// Jobs: recorded, updated, listed newest first, gone with the table.
	j := platform.TableJob{ID: platform.NewID("tjob_"), BotID: b.ID, TableID: tb.ID, Type: "export", Status: "in_progress", CreatedAt: e.now(), UpdatedAt: e.now()}
	must(t, e.s.PutTableJob(e.ctx, j), "PutTableJob")
	j2 := j
	j2.ID, j2.Type, j2.CreatedAt = platform.NewID("tjob_"), "import", e.now()
	must(t, e.s.PutTableJob(e.ctx, j2), "PutTableJob (second)")
	j.Status, j.Progress, j.OutputFileID, j.UpdatedAt = "completed", 1, "file_x", e.now()
	must(t, e.s.PutTableJob(e.ctx, j), "PutTableJob (its end)")
	jobs, err := e.s.ListTableJobs(e.ctx, tb.ID)
	must(t, err, "ListTableJobs")
	if len(jobs) != 2 || jobs[0].ID != j2.ID || jobs[1].Status != "completed" || jobs[1].OutputFileID != "file_x" || jobs[1].Progress != 1 {
		t.Errorf("ListTableJobs: %+v", jobs)
	}

	// Deleting a table, or its bot, drops its rows' table: the same id can
	// be created again.
	must(t, e.s.DeleteTable(e.ctx, tb), "DeleteTable")
	if jobs, _ := e.s.ListTableJobs(e.ctx, tb.ID); len(jobs) != 0 {
		t.Errorf("jobs of a deleted table: %v", jobs)
	}
	must(t, e.s.CreateTable(e.ctx, tb), "CreateTable with a deleted table's id")
	_, err = e.s.DeleteBot(e.ctx, b.WorkspaceID, b.ID)
	must(t, err, "DeleteBot")
	b2 := e.bot(t, b.WorkspaceID, "again")
	tb.BotID, copyT.BotID = b2.ID, b2.ID
	must(t, e.s.CreateTable(e.ctx, tb), "CreateTable with the id of a deleted bot's table")
	must(t, e.s.CreateTable(e.ctx, copyT), "CreateTable with the id of a deleted bot's other table")
	_, err = e.s.DeleteWorkspace(e.ctx, b.WorkspaceID)
	must(t, err, "DeleteWorkspace")
	w, _ := e.workspace(t, e.account(t, "tables"))
	b3 := e.bot(t, w.ID, "third")
	tb.BotID = b3.ID
	must(t, e.s.CreateTable(e.ctx, tb), "CreateTable with the id of a deleted workspace's table")
}
