package platform

import (
	"encoding/json"
	"time"
)

// Table is a bot's table (the Tables API). Its rows live in a table of
// their own in the database, one column per Column.
type Table struct {
	ID             string
	BotID          string
	Name           string
	Schema         json.RawMessage // the JSON Schema as the API shows it
	Columns        []TableColumn
	KeyColumn      string
	Frozen         bool
	Factor         int
	Tags           map[string]string
	ComputeEnabled bool
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TableColumn is a column of a table: its name, the name of its database
// column (c1, c2, …, never reused), and how its values are kept.
type TableColumn struct {
	Name       string `json:"name"`
	Phys       string `json:"phys"`
	Type       string `json:"type"` // ColumnString, ColumnNumber, …
	Searchable bool   `json:"searchable,omitempty"`
}

// How table columns keep their values.
const (
	ColumnString  = "string"
	ColumnNumber  = "number"
	ColumnBoolean = "boolean"
	ColumnDate    = "date" // a date-time string, kept in one UTC format so that order is time order
	ColumnJSON    = "json" // an object, an array, or anything else: kept as JSON
)

// TableRow is a row: its values by column name (string, float64, bool,
// json.RawMessage or nil).
type TableRow struct {
	ID        int64
	Values    map[string]any
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableJob is an export or an import of a table, with its outcome.
type TableJob struct {
	ID           string
	BotID        string
	TableID      string
	Type         string // export, import
	Status       string // pending, in_progress, completed, failed
	Progress     float64
	InputFileID  string
	OutputFileID string
	Failure      string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}
