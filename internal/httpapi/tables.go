package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/tables"
)

// TablesLimit is the Tables API's request body limit: up to 1,000 rows of
// several kilobytes each.
const TablesLimit = 10 << 20

// The Tables API (docs/tables.md): a bot's tables and their rows, by bot
// API key or by a token with x-bot-id.
func (a *api) tablesRoutes() *table {
	t := newTable("Tables")
	for _, r := range []struct {
		pattern, id string
		body        *jsonbody.Schema
		write       bool
		f           callerFunc
	}{
		{"GET /v1/tables", "listTables", nil, false, a.listTables},
		{"POST /v1/tables", "createTable", createTableSchema, true, a.createTable},
		{"GET /v1/tables/{table}", "getTable", nil, false, a.getTable},
		{"POST /v1/tables/{table}", "getOrCreateTable", getOrCreateTableSchema, true, a.getOrCreateTable},
		{"PUT /v1/tables/{table}", "updateTable", updateTableSchema, true, a.updateTable},
		{"DELETE /v1/tables/{table}", "deleteTable", nil, true, a.deleteTable},
		{"PUT /v1/tables/{table}/column", "renameTableColumn", renameColumnSchema, true, a.renameTableColumn},
		{"POST /v1/tables/{sourceTableId}/duplicate", "duplicateTable", duplicateTableSchema, true, a.duplicateTable},
		{"GET /v1/tables/{table}/row", "getTableRow", nil, false, a.getTableRow},
		{"POST /v1/tables/{table}/rows/find", "findTableRows", findRowsSchema, false, a.findTableRows},
		{"POST /v1/tables/{table}/rows", "createTableRows", rowsSchema, true, a.createTableRows},
		{"PUT /v1/tables/{table}/rows", "updateTableRows", rowsSchema, true, a.updateTableRows},
		{"POST /v1/tables/{table}/rows/upsert", "upsertTableRows", upsertRowsSchema, true, a.upsertTableRows},
		{"POST /v1/tables/{table}/rows/delete", "deleteTableRows", deleteRowsSchema, true, a.deleteTableRows},
		{"GET /v1/tables/{table}/export", "exportTable", nil, true, a.exportTable},
		{"POST /v1/tables/{table}/import", "importTable", importTableSchema, true, a.importTable},
		{"GET /v1/tables/{table}/jobs", "getTableJobs", nil, false, a.getTableJobs},
	} {
		f := r.f
		if r.write {
			f = writer(f)
		}
		t.handle(r.pattern, r.id, r.body, a.caller(f))
	}
	return t
}

const tableProps = `"factor":{"type":"number"},"frozen":{"type":"boolean"},"keyColumn":{"type":["string","null"]},"schema":{"type":"object"},
	"tags":{"type":"object","additionalProperties":{"type":"string"}},"isComputeEnabled":{"type":"boolean"}`

var (
	createTableSchema = schema("create-table.json", `{"type":"object","additionalProperties":false,"required":["name","schema"],
		"properties":{"name":{"type":"string"},`+tableProps+`}}`)
	getOrCreateTableSchema = schema("get-or-create-table.json", `{"type":"object","additionalProperties":false,"required":["schema"],
		"properties":{`+tableProps+`}}`)
	updateTableSchema  = schema("update-table.json", `{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string"},`+tableProps+`}}`)
	renameColumnSchema = schema("rename-column.json", `{"type":"object","additionalProperties":false,"required":["name","newName"],
		"properties":{"name":{"type":"string"},"newName":{"type":"string"}}}`)
	duplicateTableSchema = schema("duplicate-table.json", `{"type":"object","additionalProperties":false,
		"properties":{"tableName":{"type":"string"},"schemaOnly":{"type":"boolean"},"factor":{"type":"number"}}}`)
	rowsSchema = schema("table-rows.json", `{"type":"object","additionalProperties":false,"required":["rows"],
		"properties":{"rows":{"type":"array","items":{"type":"object"}},"waitComputed":{"type":"boolean"}}}`)
	upsertRowsSchema = schema("upsert-table-rows.json", `{"type":"object","additionalProperties":false,"required":["rows"],
		"properties":{"rows":{"type":"array","items":{"type":"object"}},"keyColumn":{"type":"string"},"waitComputed":{"type":"boolean"}}}`)
	findRowsSchema = schema("find-table-rows.json", `{"type":"object","additionalProperties":false,"properties":{
		"limit":{"type":"number"},"offset":{"type":"number"},"filter":{"type":"object"},"group":{"type":"object"},"search":{"type":"string"},
		"select":{"type":"array","items":{"type":"string"}},"orderBy":{"type":"string"},"orderDirection":{"type":"string"}}}`)
	importTableSchema = schema("import-table.json", `{"type":"object","additionalProperties":false,"required":["fileId"],
		"properties":{"fileId":{"type":"string","minLength":1}}}`)
	deleteRowsSchema = schema("delete-table-rows.json", `{"type":"object","additionalProperties":false,"properties":{
		"ids":{"type":"array","items":{"type":"number"}},"filter":{"type":"object"},"deleteAllRows":{"type":"boolean"}}}`)
)

func tableView(v tables.View, counted bool) map[string]any {
	out := map[string]any{"table": tables.TableJSON(v.Table)}
	if counted {
		out["rows"], out["stale"], out["indexing"] = v.Rows, 0, 0
	}
	return out
}

func (a *api) listTables(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	tags, err := newQuery(r).tags()
	if err != nil {
		return err
	}
	ts, err := a.Tables.ListTables(r.Context(), c.BotID, tags)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ts))
	for i, t := range ts {
		out[i] = tables.TableJSON(t)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": out})
	return nil
}

func (a *api) createTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in tables.TableInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := a.Tables.CreateTable(r.Context(), c.BotID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableView(v, false))
	return nil
}

func (a *api) getTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	v, err := a.Tables.Table(r.Context(), c.BotID, r.PathValue("table"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableView(v, true))
	return nil
}

func (a *api) getOrCreateTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in tables.TableInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, created, err := a.Tables.GetOrCreateTable(r.Context(), c.BotID, r.PathValue("table"), in)
	if err != nil {
		return err
	}
	out := tableView(v, true)
	out["created"] = created
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) updateTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in tables.TableInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := a.Tables.UpdateTable(r.Context(), c.BotID, r.PathValue("table"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableView(v, false))
	return nil
}

func (a *api) deleteTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	if err := a.Tables.DeleteTable(r.Context(), c.BotID, r.PathValue("table")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (a *api) renameTableColumn(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct{ Name, NewName string }
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := a.Tables.RenameColumn(r.Context(), c.BotID, r.PathValue("table"), in.Name, in.NewName)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tableView(v, false))
	return nil
}

func (a *api) duplicateTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct {
		TableName  *string  `json:"tableName"`
		SchemaOnly bool     `json:"schemaOnly"`
		Factor     *float64 `json:"factor"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := a.Tables.DuplicateTable(r.Context(), c.BotID, r.PathValue("sourceTableId"), in.TableName, in.SchemaOnly, in.Factor)
	if err != nil {
		return err
	}
	// The official answer counts the rows copied (none for schemaOnly).
	writeJSON(w, http.StatusOK, map[string]any{"table": tables.TableJSON(v.Table), "rows": v.Rows})
	return nil
}

func rowsJSON(t platform.Table, rows []platform.TableRow) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, row := range rows {
		out[i] = tables.RowJSON(t, row, nil)
	}
	return out
}

func (a *api) getTableRow(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil || id < 1 {
		return platform.Errorf(platform.TypeInvalidQuery, "id: must be a row id (a whole number)")
	}
	t, row, err := a.Tables.Row(r.Context(), c.BotID, r.PathValue("table"), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"row": tables.RowJSON(t, row, nil)})
	return nil
}

func (a *api) findTableRows(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in tables.FindInput
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := a.Tables.FindRows(r.Context(), c.BotID, r.PathValue("table"), in)
	if err != nil {
		return err
	}
	rows := f.Groups
	if rows == nil {
		rows = make([]map[string]any, len(f.Rows))
		for i, row := range f.Rows {
			rows[i] = tables.RowJSON(f.Table, row, f.Select)
			if f.Similarity != nil {
				rows[i]["similarity"] = f.Similarity[i]
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rows, "hasMore": f.HasMore, "offset": f.Offset, "limit": f.Limit})
	return nil
}

type rowsBody struct {
	Rows      []json.RawMessage `json:"rows"`
	KeyColumn string            `json:"keyColumn"`
}

func (a *api) createTableRows(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in rowsBody
	if err := decode(r, &in); err != nil {
		return err
	}
	t, rows, err := a.Tables.CreateRows(r.Context(), c.BotID, r.PathValue("table"), in.Rows)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rowsJSON(t, rows)})
	return nil
}

func (a *api) updateTableRows(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in rowsBody
	if err := decode(r, &in); err != nil {
		return err
	}
	t, rows, err := a.Tables.UpdateRows(r.Context(), c.BotID, r.PathValue("table"), in.Rows)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rowsJSON(t, rows)})
	return nil
}

func (a *api) upsertTableRows(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in rowsBody
	if err := decode(r, &in); err != nil {
		return err
	}
	t, ins, upd, err := a.Tables.UpsertRows(r.Context(), c.BotID, r.PathValue("table"), in.KeyColumn, in.Rows)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"inserted": rowsJSON(t, ins), "updated": rowsJSON(t, upd)})
	return nil
}

func (a *api) deleteTableRows(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in tables.DeleteInput
	if err := decode(r, &in); err != nil {
		return err
	}
	n, err := a.Tables.DeleteRows(r.Context(), c.BotID, r.PathValue("table"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deletedRows": n})
	return nil
}

func (a *api) exportTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	q := newQuery(r)
	format, err := q.enum("format", "csv", "json")
	if err != nil {
		return err
	}
	compress, err := q.boolean("compress")
	if err != nil {
		return err
	}
	j, err := a.Tables.Export(r.Context(), c, r.PathValue("table"), format, compress != nil && *compress)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"job": tables.JobJSON(j)})
	return nil
}

func (a *api) importTable(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	var in struct {
		FileID string `json:"fileId"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	j, err := a.Tables.Import(r.Context(), c, r.PathValue("table"), in.FileID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"job": tables.JobJSON(j)})
	return nil
}

func (a *api) getTableJobs(w http.ResponseWriter, r *http.Request, c *files.Caller) error {
	jobs, err := a.Tables.Jobs(r.Context(), c.BotID, r.PathValue("table"))
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(jobs))
	for i, j := range jobs {
		out[i] = tables.JobJSON(j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
	return nil
}
