package tables

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Exports and imports: a table's rows to and from a file of the Files API
// (CSV or JSON, gzipped or not). Each runs while its request waits and is
// recorded as a job with its outcome (getTableJobs).

// Files is what exports and imports need of the Files API.
type Files interface {
	Store(ctx context.Context, c *files.Caller, key, contentType string, tags map[string]string, body []byte) (platform.File, error)
	Open(ctx context.Context, c *files.Caller, idOrKey string) (platform.File, blob.Reader, error)
}

var _ Files = (*files.Service)(nil)

// MaxImportBytes bounds the (uncompressed) file an import reads.
const MaxImportBytes = 50 << 20

// JobJSON renders a table job as the API returns it.
func JobJSON(j platform.TableJob) map[string]any {
	out := map[string]any{"id": j.ID, "botId": j.BotID, "tableId": j.TableID, "type": j.Type, "status": j.Status, "progress": j.Progress,
		"inputFileId": nil, "outputFileId": nil, "createdAt": platform.FormatTime(j.CreatedAt), "updatedAt": platform.FormatTime(j.UpdatedAt)}
	if j.InputFileID != "" {
		out["inputFileId"] = j.InputFileID
	}
	if j.OutputFileID != "" {
		out["outputFileId"] = j.OutputFileID
	}
	return out
}

// Jobs lists a table's jobs, newest first.
func (s *Service) Jobs(ctx context.Context, botID, idOrName string) ([]platform.TableJob, error) {
	t, err := s.table(ctx, botID, idOrName)
	if err != nil {
		return nil, err
	}
	return s.store.ListTableJobs(ctx, t.ID)
}

// run records a job, runs it, and records how it ended; a failure is also
// the request's error.
func (s *Service) run(ctx context.Context, j platform.TableJob, work func(j *platform.TableJob) error) (platform.TableJob, error) {
	now := s.clock.Now()
	j.ID, j.Status, j.CreatedAt, j.UpdatedAt = platform.NewID("tjob_"), "in_progress", now, now
	if err := s.store.PutTableJob(ctx, j); err != nil {
		return j, err
	}
	err := work(&j)
	j.Status, j.Progress, j.UpdatedAt = "completed", 1, s.clock.Now()
	if err != nil {
		j.Status, j.Progress, j.Failure = "failed", 0, err.Error()
	}
	if perr := s.store.PutTableJob(context.WithoutCancel(ctx), j); perr != nil && err == nil {
		err = perr
	}
	return j, err
}

// Export writes every row of a table to a new file of the bot
// (tables/<name>/<job id>.csv or .json, .gz with compress) and answers the
// completed job, whose outputFileId names it.
func (s *Service) Export(ctx context.Context, c *files.Caller, idOrName, format string, compress bool) (platform.TableJob, error) {
	t, err := s.table(ctx, c.BotID, idOrName)
	if err != nil {
		return platform.TableJob{}, err
	}
	switch format {
	case "":
		format = "csv"
	case "csv", "json":
	default:
		return platform.TableJob{}, platform.Errorf(platform.TypeInvalidQuery, "format: must be csv or json")
	}
	if s.files == nil {
		return platform.TableJob{}, errors.New("tables: no Files API to export to")
	}
	return s.run(ctx, platform.TableJob{BotID: c.BotID, TableID: t.ID, Type: "export"}, func(j *platform.TableJob) error {
		var body bytes.Buffer
		if err := s.write(ctx, t, format, &body); err != nil {
			return err
		}
		data, ct, ext := body.Bytes(), map[string]string{"csv": "text/csv", "json": "application/json"}[format], format
		if compress {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, _ = zw.Write(data)
			_ = zw.Close()
			data, ct, ext = z.Bytes(), "application/gzip", ext+".gz"
		}
		f, err := s.files.Store(ctx, c, fmt.Sprintf("tables/%s/%s.%s", t.Name, j.ID, ext), ct, map[string]string{"tableId": t.ID}, data)
		if err != nil {
			return err
		}
		j.OutputFileID = f.ID
		return nil
	})
}

// write writes a table's rows, in id order, as CSV (a header of id,
// createdAt, updatedAt and the columns; JSON columns as JSON text) or as a
// JSON array of rows.
func (s *Service) write(ctx context.Context, t platform.Table, format string, w io.Writer) error {
	var cw *csv.Writer
	if format == "csv" {
		cw = csv.NewWriter(w)
		header := []string{"id", "createdAt", "updatedAt"}
		for _, c := range t.Columns {
			header = append(header, c.Name)
		}
		if err := cw.Write(header); err != nil {
			return err
		}
	} else {
		io.WriteString(w, "[")
	}
	var last int64
	first := true
	for {
		rows, more, err := s.store.FindTableRows(ctx, t, store.TableQuery{Where: &store.Cond{Column: "id", Op: "gt", Value: last}, Limit: 1000})
		if err != nil {
			return err
		}
		for _, r := range rows {
			last = r.ID
			if cw != nil {
				rec := []string{strconv.FormatInt(r.ID, 10), platform.FormatTime(r.CreatedAt), platform.FormatTime(r.UpdatedAt)}
				for _, c := range t.Columns {
					rec = append(rec, csvValue(r.Values[c.Name]))
				}
				if err := cw.Write(rec); err != nil {
					return err
				}
				continue
			}
			b, _ := json.Marshal(RowJSON(t, r, nil))
			if !first {
				io.WriteString(w, ",")
			}
			first = false
			w.Write(b)
		}
		if !more {
			break
		}
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	_, err := io.WriteString(w, "]")
	return err
}

func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case json.RawMessage:
		return string(x)
	}
	return fmt.Sprint(v)
}

// Import adds the rows of a file of the bot (CSV with a header of column
// names, or a JSON array of rows; gzipped or not) to a table. Every row is
// checked before any is written, and all are written at once: a file with
// one bad row imports nothing, and the error names the row.
func (s *Service) Import(ctx context.Context, c *files.Caller, idOrName, fileID string) (platform.TableJob, error) {
	t, err := s.table(ctx, c.BotID, idOrName)
	if err != nil {
		return platform.TableJob{}, err
	}
	if s.files == nil {
		return platform.TableJob{}, errors.New("tables: no Files API to import from")
	}
	f, rd, err := s.files.Open(ctx, c, fileID)
	if err != nil {
		if e, ok := platform.AsError(err); ok && e.Type == platform.TypeResourceNotFound {
			return platform.TableJob{}, platform.Errorf(platform.TypeReferenceNotFound, "fileId: %s", e.Message)
		}
		return platform.TableJob{}, err
	}
	defer rd.Close()
	return s.run(ctx, platform.TableJob{BotID: c.BotID, TableID: t.ID, Type: "import", InputFileID: f.ID}, func(j *platform.TableJob) error {
		raw, err := readImport(rd, t)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		rows := make([]platform.TableRow, len(raw))
		for i, r := range raw {
			vals, err := rowValues(t, fmt.Sprintf("fileId: row %d", i+1), r, false)
			if err != nil {
				return err
			}
			rows[i] = platform.TableRow{Values: vals, CreatedAt: now, UpdatedAt: now}
		}
		if len(rows) == 0 {
			return nil
		}
		if err := s.roomFor(ctx, t, len(rows)); err != nil {
			return err
		}
		_, err = s.store.InsertTableRows(ctx, t, rows)
		return taken(t, err)
	})
}

// readImport reads an import file's rows as JSON objects.
func readImport(rd io.Reader, t platform.Table) ([]json.RawMessage, error) {
	br := bufio.NewReader(rd)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, platform.Invalid("fileId", "the file is not valid gzip: %v", err)
		}
		br = bufio.NewReader(zr)
	}
	data, err := io.ReadAll(io.LimitReader(br, MaxImportBytes+1))
	if err != nil {
		return nil, platform.Invalid("fileId", "the file could not be read: %v", err)
	}
	if len(data) > MaxImportBytes {
		return nil, platform.Invalid("fileId", "the file holds more than %d MB", MaxImportBytes>>20)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		if err := platform.CheckJSON(trimmed, "fileId"); err != nil {
			return nil, err
		}
		var rows []json.RawMessage
		if trimmed[0] == '{' {
			var doc struct {
				Rows []json.RawMessage `json:"rows"`
			}
			if err := json.Unmarshal(trimmed, &doc); err != nil {
				return nil, platform.Invalid("fileId", "the JSON file is not an array of rows or {rows: […]}: %v", err)
			}
			rows = doc.Rows
		} else if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, platform.Invalid("fileId", "the JSON file is not an array of rows: %v", err)
		}
		return rows, nil
	}
	return csvRows(data, t)
}

// csvRows turns CSV with a header into rows, each cell read as its
// column's kind (a cell that is not of it stays a string, for the schema to
// refuse naming it); an empty cell is no value. The id, createdAt and
// updatedAt of an export, and cells of no column, are skipped.
func csvRows(data []byte, t platform.Table) ([]json.RawMessage, error) {
	kinds := map[string]string{}
	for _, c := range t.Columns {
		kinds[c.Name] = c.Type
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, platform.Invalid("fileId", "the file is neither JSON nor valid CSV: %v", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	header := recs[0]
	out := make([]json.RawMessage, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		if len(rec) != len(header) {
			return nil, platform.Invalid("fileId", "row %d has %d cells; the header has %d", i+1, len(rec), len(header))
		}
		row := map[string]json.RawMessage{}
		for k, name := range header {
			name = strings.TrimSpace(name)
			kind, ok := kinds[name]
			if rec[k] == "" || !ok {
				continue
			}
			v, _ := json.Marshal(rec[k])
			switch kind {
			case platform.ColumnNumber:
				if _, err := strconv.ParseFloat(rec[k], 64); err == nil {
					v = []byte(rec[k])
				}
			case platform.ColumnBoolean:
				if rec[k] == "true" || rec[k] == "false" {
					v = []byte(rec[k])
				}
			case platform.ColumnJSON:
				if json.Valid([]byte(rec[k])) {
					v = []byte(rec[k])
				}
			}
			row[name] = v
		}
		b, _ := json.Marshal(row)
		out = append(out, b)
	}
	return out, nil
}
