package openapi

// The Tables API (docs/tables.md).

var (
	tableResult   = wrap("table", ref("Table"))
	countedResult = props(obj{"table": ref("Table"), "rows": integer, "stale": integer, "indexing": integer},
		"table", "rows", "stale", "indexing")
	rowsResult = wrap("rows", array(ref("Row")))
	jobResult  = wrap("job", ref("TableJob"))
)

var _ = describe(map[string]op{
	"listTables":  {summary: "The bot's tables", params: []parameter{tagFilter}, result: wrap("tables", array(ref("Table")))},
	"createTable": {summary: "Create a table", result: tableResult, errs: []int{403, 409}},
	"getTable":    {summary: "A table, by id or name, with its row count", result: countedResult},
	"getOrCreateTable": {summary: "The table of that name, created if none", errs: []int{403},
		result: props(obj{"table": ref("Table"), "rows": integer, "stale": integer, "indexing": integer, "created": boolean},
			"table", "rows", "stale", "indexing", "created")},
	"updateTable":       {summary: "Change a table's name, schema or tags", result: tableResult, errs: []int{409}},
	"deleteTable":       {summary: "Delete a table and its rows", result: empty},
	"renameTableColumn": {summary: "Rename a column", result: tableResult, errs: []int{409}},
	"duplicateTable":    {summary: "Copy a table, with or without its rows", result: tableResult, errs: []int{403, 409}},
	"getTableRow": {summary: "A row", result: wrap("row", ref("Row")),
		params: []parameter{required(query("id", obj{"type": "integer", "minimum": 1}, "the row's id"))}},
	"findTableRows": {summary: "Rows matching a filter, or groups of them",
		result: props(obj{"rows": array(object), "hasMore": boolean, "offset": integer, "limit": integer}, "rows", "hasMore", "offset", "limit")},
	"createTableRows": {summary: "Add rows", result: rowsResult, errs: []int{403}},
	"updateTableRows": {summary: "Change rows, by id", result: rowsResult},
	"upsertTableRows": {summary: "Add rows, or change those of the same key", errs: []int{403},
		result: props(obj{"inserted": array(ref("Row")), "updated": array(ref("Row"))}, "inserted", "updated")},
	"deleteTableRows": {summary: "Delete rows by id, by filter, or all", result: wrap("deletedRows", integer)},
	"exportTable": {summary: "Export a table's rows to a file", returns: "the finished job, naming the file", result: jobResult,
		params: []parameter{query("format", enum("csv", "json"), "csv by default"), query("compress", boolean, "gzip the file")}},
	"importTable":  {summary: "Import rows from a file", returns: "the finished job", result: jobResult, errs: []int{403}},
	"getTableJobs": {summary: "A table's import and export jobs, newest first", result: wrap("jobs", array(ref("TableJob")))},
})
