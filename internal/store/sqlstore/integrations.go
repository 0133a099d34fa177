package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Integrations, interfaces and plugins are stored alike, each in its table:
// one row per version (an interface's code is empty).

func (s *Store) CreateIntegration(ctx context.Context, i platform.Integration) error {
	return s.createVersion(ctx, "integrations", i)
}

func (s *Store) CreateInterface(ctx context.Context, i platform.Integration) error {
	return s.createVersion(ctx, "interfaces", i)
}

func (s *Store) CreatePlugin(ctx context.Context, i platform.Integration) error {
	return s.createVersion(ctx, "plugins", i)
}

func (s *Store) createVersion(ctx context.Context, table string, i platform.Integration) error {
	spec, err := json.Marshal(i.Spec)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO `+table+` (id, workspace_id, name, version, dev, visibility, created_by, created_at, updated_at, spec, code)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			i.ID, i.WorkspaceID, i.Name, i.Version, i.Dev, i.Visibility, i.CreatedBy, micros(i.CreatedAt), micros(i.UpdatedAt), string(spec), i.Code)
		return err
	})
}

const integrationVersionCols = `n.id, n.workspace_id, n.name, n.version, n.dev, n.visibility, n.created_by, n.created_at, n.updated_at, n.spec`

func scanIntegration(row interface{ Scan(...any) error }, i *platform.Integration, more ...any) error {
	var spec string
	var created, updated int64
	if err := row.Scan(append([]any{&i.ID, &i.WorkspaceID, &i.Name, &i.Version, &i.Dev, &i.Visibility, &i.CreatedBy, &created, &updated, &spec}, more...)...); err != nil {
		return noRows(err)
	}
	i.CreatedAt, i.UpdatedAt = fromMicros(created), fromMicros(updated)
	return json.Unmarshal([]byte(spec), &i.Spec)
}

func (s *Store) GetIntegration(ctx context.Context, id string) (platform.Integration, error) {
	return s.getVersion(ctx, "integrations", id)
}

func (s *Store) GetInterface(ctx context.Context, id string) (platform.Integration, error) {
	return s.getVersion(ctx, "interfaces", id)
}

func (s *Store) GetPlugin(ctx context.Context, id string) (platform.Integration, error) {
	return s.getVersion(ctx, "plugins", id)
}

func (s *Store) getVersion(ctx context.Context, table, id string) (platform.Integration, error) {
	var i platform.Integration
	err := scanIntegration(s.queryRow(ctx, `SELECT `+integrationVersionCols+`, n.code FROM `+table+` n WHERE n.id = ?`, id), &i, &i.Code)
	return i, err
}

func (s *Store) GetIntegrationByName(ctx context.Context, name, version string) (platform.Integration, error) {
	return s.getVersionByName(ctx, "integrations", name, version)
}

func (s *Store) GetInterfaceByName(ctx context.Context, name, version string) (platform.Integration, error) {
	return s.getVersionByName(ctx, "interfaces", name, version)
}

func (s *Store) GetPluginByName(ctx context.Context, name, version string) (platform.Integration, error) {
	return s.getVersionByName(ctx, "plugins", name, version)
}

func (s *Store) getVersionByName(ctx context.Context, table, name, version string) (platform.Integration, error) {
	var i platform.Integration
	err := scanIntegration(s.queryRow(ctx, `SELECT `+integrationVersionCols+`, n.code FROM `+table+` n
		WHERE n.name = ? AND n.version = ? AND n.dev = ?`, name, version, false), &i, &i.Code)
	return i, err
}

func (s *Store) UpdateIntegration(ctx context.Context, i platform.Integration) error {
	return s.updateVersion(ctx, "integrations", i)
}

func (s *Store) UpdateInterface(ctx context.Context, i platform.Integration) error {
	return s.updateVersion(ctx, "interfaces", i)
}

func (s *Store) UpdatePlugin(ctx context.Context, i platform.Integration) error {
	return s.updateVersion(ctx, "plugins", i)
}

func (s *Store) updateVersion(ctx context.Context, table string, i platform.Integration) error {
	spec, err := json.Marshal(i.Spec)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `UPDATE `+table+` SET visibility = ?, spec = ?, code = ?, updated_at = ? WHERE id = ? AND workspace_id = ?`,
			i.Visibility, string(spec), i.Code, micros(i.UpdatedAt), i.ID, i.WorkspaceID)
	})
}

func (s *Store) DeleteIntegration(ctx context.Context, workspaceID, id string) error {
	return s.deleteVersion(ctx, "integrations", workspaceID, id)
}

func (s *Store) DeleteInterface(ctx context.Context, workspaceID, id string) error {
	return s.deleteVersion(ctx, "interfaces", workspaceID, id)
}

func (s *Store) DeletePlugin(ctx context.Context, workspaceID, id string) error {
	return s.deleteVersion(ctx, "plugins", workspaceID, id)
}

func (s *Store) deleteVersion(ctx context.Context, table, workspaceID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `DELETE FROM `+table+` WHERE id = ? AND workspace_id = ?`, id, workspaceID)
	})
}

func (s *Store) ListIntegrations(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error) {
	return s.listVersions(ctx, "integrations", f)
}

func (s *Store) ListInterfaces(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error) {
	return s.listVersions(ctx, "interfaces", f)
}

func (s *Store) ListPlugins(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error) {
	return s.listVersions(ctx, "plugins", f)
}

func (s *Store) listVersions(ctx context.Context, table string, f store.IntegrationFilter) ([]platform.Integration, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + integrationVersionCols + ` FROM ` + table + ` n WHERE 1 = 1`)
	args := make([]any, 0, 8)
	for _, c := range []struct{ col, v string }{{"n.workspace_id", f.WorkspaceID}, {"n.name", f.Name}, {"n.version", f.Version}} {
		if c.v != "" {
			q.WriteString(` AND ` + c.col + ` = ?`)
			args = append(args, c.v)
		}
	}
	if f.Dev != nil {
		q.WriteString(` AND n.dev = ?`)
		args = append(args, *f.Dev)
	}
	if len(f.Visibility) > 0 {
		q.WriteString(` AND n.visibility IN (` + placeholders(len(f.Visibility)) + `)`)
		for _, v := range f.Visibility {
			args = append(args, v)
		}
	}
	if len(f.IDs) > 0 {
		q.WriteString(` AND n.id IN (` + placeholders(len(f.IDs)) + `)`)
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if cur != nil {
		q.WriteString(` AND (n.created_at > ? OR (n.created_at = ? AND n.id > ?))`)
		args = append(args, cur.Value, cur.Value, cur.ID)
	}
	q.WriteString(` ORDER BY n.created_at, n.id LIMIT ?`)
	args = append(args, f.Limit+1)
	rows, err := s.query(ctx, q.String(), args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []platform.Integration
	for rows.Next() {
		var i platform.Integration
		if err := scanIntegration(rows, &i); err != nil {
			return nil, "", err
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, f.Limit, func(i platform.Integration) store.Cursor {
		return store.Cursor{Value: micros(i.CreatedAt), ID: i.ID}
	})
	return page, next, nil
}

func (s *Store) IntegrationVersion(ctx context.Context, id string) (time.Time, error) {
	var updated int64
	err := s.queryRow(ctx, `SELECT updated_at FROM integrations WHERE id = ?`, id).Scan(&updated)
	return fromMicros(updated), noRows(err)
}
