package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func (s *Store) CreateBot(ctx context.Context, b platform.Bot) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		spec, tags, err := botJSON(b)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO bots (id, workspace_id, name, dev, type, status, signing_secret, code, tags, created_by, spec, deployed_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, b.WorkspaceID, b.Name, b.Dev, b.Type, b.Status, b.SigningSecret, b.Code, tags, b.CreatedBy, spec,
			nullMicros(b.DeployedAt), micros(b.CreatedAt), micros(b.UpdatedAt)); err != nil {
			return err
		}
		return s.writeBotChildren(ctx, tx, b, true)
	})
}

func botJSON(b platform.Bot) (spec, tags string, err error) {
	sb, err := json.Marshal(b.Spec)
	if err != nil {
		return "", "", err
	}
	if b.Tags == nil {
		b.Tags = map[string]string{}
	}
	tb, err := json.Marshal(b.Tags)
	return string(sb), string(tb), err
}

// writeBotChildren replaces the bot's tag rows, integrations and plugins
// (of a bot just created, writes them).
func (s *Store) writeBotChildren(ctx context.Context, tx *sql.Tx, b platform.Bot, created bool) error {
	if _, err := s.exec(ctx, tx, `DELETE FROM bot_tags WHERE bot_id = ?`, b.ID); err != nil {
		return err
	}
	for k, v := range b.Tags {
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_tags (bot_id, key, value) VALUES (?, ?, ?)`, b.ID, k, v); err != nil {
			return err
		}
	}
	if _, err := s.exec(ctx, tx, `DELETE FROM bot_integrations WHERE bot_id = ?`, b.ID); err != nil {
		return err
	}
	for _, in := range b.Integrations {
		cfg, err := json.Marshal(in.Configuration)
		if err != nil {
			return err
		}
		dc := in.DisabledChannels
		if dc == nil {
			dc = []string{}
		}
		dcj, _ := json.Marshal(dc)
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_integrations (bot_id, integration_id, name, version, webhook_id, enabled, configuration, disabled_channels, created_at, updated_at, status, status_reason, configuration_type)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, in.IntegrationID, in.Name, in.Version, in.WebhookID, in.Enabled, string(cfg), string(dcj),
			micros(in.CreatedAt), micros(in.UpdatedAt), in.Status, in.StatusReason, in.ConfigurationType); err != nil {
			return err
		}
	}
	if created && len(b.Plugins) == 0 {
		return nil
	}
	return s.writeBotPlugins(ctx, tx, b)
}

// writeBotPlugins replaces the bot's plugins.
func (s *Store) writeBotPlugins(ctx context.Context, tx *sql.Tx, b platform.Bot) error {
	if _, err := s.exec(ctx, tx, `DELETE FROM bot_plugins WHERE bot_id = ?`, b.ID); err != nil {
		return err
	}
	for _, p := range b.Plugins {
		cfg, err := json.Marshal(p.Configuration)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO bot_plugins (bot_id, alias, plugin_id, name, version, enabled, configuration, interfaces, integrations, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, p.Alias, p.PluginID, p.Name, p.Version, p.Enabled, string(cfg), orEmptyObject(p.Interfaces), orEmptyObject(p.Integrations),
			micros(p.CreatedAt), micros(p.UpdatedAt)); err != nil {
			return err
		}
	}
	return nil
}

func orEmptyObject(v json.RawMessage) string {
	if len(v) == 0 {
		return "{}"
	}
	return string(v)
}

// plugins reads the bot's plugins, by alias.
func (s *Store) plugins(ctx context.Context, botID string) ([]platform.BotPlugin, error) {
	rows, err := s.query(ctx, `SELECT alias, plugin_id, name, version, enabled, configuration, interfaces, integrations, created_at, updated_at
		FROM bot_plugins WHERE bot_id = ? ORDER BY alias`, botID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.BotPlugin
	for rows.Next() {
		var p platform.BotPlugin
		var cfg, ifaces, ints string
		var created, updated int64
		if err := rows.Scan(&p.Alias, &p.PluginID, &p.Name, &p.Version, &p.Enabled, &cfg, &ifaces, &ints, &created, &updated); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(cfg), &p.Configuration); err != nil {
			return nil, err
		}
		p.Interfaces, p.Integrations = json.RawMessage(ifaces), json.RawMessage(ints)
		p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *Store) CountPluginInstallations(ctx context.Context, pluginID string) (int, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM bot_plugins WHERE plugin_id = ?`, pluginID).Scan(&n)
	return n, err
}

func (s *Store) GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error) {
	var b platform.Bot
	var spec, tags string
	var deployed sql.NullInt64
	var created, updated int64
	err := s.queryRow(ctx, `SELECT id, workspace_id, name, dev, type, status, signing_secret, code, tags, created_by, spec, deployed_at, created_at, updated_at
		FROM bots WHERE workspace_id = ? AND id = ?`, workspaceID, id).
		Scan(&b.ID, &b.WorkspaceID, &b.Name, &b.Dev, &b.Type, &b.Status, &b.SigningSecret, &b.Code, &tags, &b.CreatedBy, &spec, &deployed, &created, &updated)
	if err != nil {
		return b, noRows(err)
	}
	if err := json.Unmarshal([]byte(spec), &b.Spec); err != nil {
		return b, err
	}
	if err := json.Unmarshal([]byte(tags), &b.Tags); err != nil {
		return b, err
	}
	b.DeployedAt = fromNullMicros(deployed)
	b.CreatedAt, b.UpdatedAt = fromMicros(created), fromMicros(updated)
	if b.Integrations, err = s.integrations(ctx, `i.bot_id = ?`, b.ID); err != nil {
		return b, err
	}
	b.Plugins, err = s.plugins(ctx, b.ID)
	return b, err
}

const integrationCols = `i.bot_id, i.integration_id, i.name, i.version, i.webhook_id, i.enabled, i.configuration, i.disabled_channels, i.created_at, i.updated_at, i.status, i.status_reason, i.configuration_type`

func (s *Store) integrations(ctx context.Context, where string, arg any) ([]platform.BotIntegration, error) {
	rows, err := s.query(ctx, `SELECT `+integrationCols+` FROM bot_integrations i WHERE `+where+` ORDER BY i.integration_id`, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []platform.BotIntegration
	for rows.Next() {
		var in platform.BotIntegration
		var raw integrationRaw
		if err := rows.Scan(raw.dst(&in)...); err != nil {
			return nil, err
		}
		if err := raw.decode(&in); err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// integrationRaw holds the columns of integrationCols that are decoded
// after the scan.
type integrationRaw struct {
	cfg, dc          string
	created, updated int64
}

// dst is where integrationCols scan to.
func (r *integrationRaw) dst(in *platform.BotIntegration) []any {
	return []any{&in.BotID, &in.IntegrationID, &in.Name, &in.Version, &in.WebhookID, &in.Enabled, &r.cfg, &r.dc, &r.created, &r.updated,
		&in.Status, &in.StatusReason, &in.ConfigurationType}
}

func (r *integrationRaw) decode(in *platform.BotIntegration) error {
	if err := json.Unmarshal([]byte(r.cfg), &in.Configuration); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(r.dc), &in.DisabledChannels); err != nil {
		return err
	}
	in.CreatedAt, in.UpdatedAt = fromMicros(r.created), fromMicros(r.updated)
	return nil
}

func (s *Store) GetWebhookUser(ctx context.Context, webhookID, fid string) (platform.BotIntegration, platform.ChatUser, bool, error) {
	var in platform.BotIntegration
	var u platform.ChatUser
	var rawIn integrationRaw
	var rawU chatUserRaw
	err := s.queryRow(ctx, `SELECT `+integrationCols+`, `+chatUserOrEmptyCols+` FROM bot_integrations i
		LEFT JOIN chat_users u ON u.bot_id = i.bot_id AND u.fid = ? WHERE i.webhook_id = ?`, fid, webhookID).
		Scan(append(rawIn.dst(&in), rawU.dst(&u)...)...)
	if err != nil {
		return in, platform.ChatUser{}, false, noRows(err)
	}
	if err := rawIn.decode(&in); err != nil {
		return in, platform.ChatUser{}, false, err
	}
	if u.ID == "" {
		return in, platform.ChatUser{}, false, nil
	}
	err = rawU.decode(&u)
	return in, u, err == nil, err
}

func (s *Store) GetIntegrationByWebhook(ctx context.Context, webhookID string) (platform.BotIntegration, error) {
	ins, err := s.integrations(ctx, `i.webhook_id = ?`, webhookID)
	if err != nil {
		return platform.BotIntegration{}, err
	}
	if len(ins) == 0 {
		return platform.BotIntegration{}, platform.ErrNotFound
	}
	return ins[0], nil
}

func (s *Store) UpdateBot(ctx context.Context, b platform.Bot) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.updateBot(ctx, tx, b) })
}

func (s *Store) updateBot(ctx context.Context, tx *sql.Tx, b platform.Bot) error {
	spec, tags, err := botJSON(b)
	if err != nil {
		return err
	}
	if err := s.execOne(ctx, tx, `UPDATE bots SET name = ?, type = ?, status = ?, signing_secret = ?, code = ?, tags = ?, spec = ?, deployed_at = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ?`,
		b.Name, b.Type, b.Status, b.SigningSecret, b.Code, tags, spec, nullMicros(b.DeployedAt), micros(b.UpdatedAt),
		b.WorkspaceID, b.ID); err != nil {
		return err
	}
	return s.writeBotChildren(ctx, tx, b, false)
}

func (s *Store) DeleteBot(ctx context.Context, workspaceID, id string) ([]string, error) {
	var blobs []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if blobs, err = s.dropFiles(ctx, tx, workspaceID, `bot_id = ?`, id); err != nil {
			return err
		}
		if err := s.dropTables(ctx, tx, `bot_id IN (SELECT id FROM bots WHERE workspace_id = ? AND id = ?)`, workspaceID, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE subject IN (SELECT id FROM conversations WHERE bot_id = ?) OR subject = ?`, id, platform.JobSubjectBot(id)); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `DELETE FROM bots WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	})
	return blobs, err
}

// ListBots returns one page of bots in keyset order (sort column, then id).
// The listing carries what listBots shows: no code, status, spec or
// integrations (fewer columns is most of the cost per row).
func (s *Store) ListBots(ctx context.Context, workspaceID string, f store.BotFilter) ([]platform.BotSummary, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	col := "b.created_at"
	if f.SortField == "updatedAt" {
		col = "b.updated_at"
	}
	dir, cmp := "ASC", ">"
	if f.Descending {
		dir, cmp = "DESC", "<"
	}
	var q strings.Builder
	q.Grow(512)
	q.WriteString(`SELECT b.id, b.name, b.type, b.tags, b.deployed_at, b.created_at, b.updated_at
		FROM bots b WHERE b.workspace_id = ? AND b.dev = ?`)
	args := make([]any, 0, 8)
	args = append(args, workspaceID, f.Dev)
	keys := make([]string, 0, len(f.Tags))
	for k := range f.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable query text keeps the statement cache useful
	for _, k := range keys {
		vals := f.Tags[k]
		if len(vals) == 0 {
			// A key listing no value matches no bot; `IN ()` is not valid
			// PostgreSQL (SQLite accepts it and matches nothing).
			q.WriteString(` AND 1 = 0`)
			continue
		}
		q.WriteString(` AND EXISTS (SELECT 1 FROM bot_tags t WHERE t.bot_id = b.id AND t.key = ? AND t.value IN (` + placeholders(len(vals)) + `))`)
		args = append(args, k)
		for _, v := range vals {
			args = append(args, v)
		}
	}
	for _, name := range f.IntegrationNames {
		q.WriteString(` AND EXISTS (SELECT 1 FROM bot_integrations i WHERE i.bot_id = b.id AND i.name = ?)`)
		args = append(args, name)
	}
	if cur != nil {
		q.WriteString(` AND (` + col + ` ` + cmp + ` ? OR (` + col + ` = ? AND b.id ` + cmp + ` ?))`)
		args = append(args, cur.Value, cur.Value, cur.ID)
	}
	q.WriteString(` ORDER BY ` + col + ` ` + dir + `, b.id ` + dir + ` LIMIT ?`)
	args = append(args, f.Limit+1)

	rows, err := s.query(ctx, q.String(), args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := make([]platform.BotSummary, 0, f.Limit+1)
	for rows.Next() {
		var b platform.BotSummary
		var deployed sql.NullInt64
		var created, updated int64
		if err := rows.Scan(&b.ID, &b.Name, &b.Type, (*[]byte)(&b.Tags), &deployed, &created, &updated); err != nil {
			return nil, "", err
		}
		b.DeployedAt = fromNullMicros(deployed)
		b.CreatedAt, b.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, f.Limit, func(b platform.BotSummary) store.Cursor {
		v := b.CreatedAt
		if f.SortField == "updatedAt" {
			v = b.UpdatedAt
		}
		return store.Cursor{Value: micros(v), ID: b.ID}
	})
	return page, next, nil
}

func (s *Store) CreateBotKey(ctx context.Context, workspaceID string, t platform.Token) error {
	// The INSERT … SELECT only inserts when the bot is in the workspace.
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `INSERT INTO bot_keys (id, bot_id, note, hash, created_at)
			SELECT ?, b.id, ?, ?, ? FROM bots b WHERE b.id = ? AND b.workspace_id = ?`,
			t.ID, t.Note, t.Hash, micros(t.CreatedAt), t.OwnerID, workspaceID)
	})
}

func (s *Store) ListBotKeys(ctx context.Context, workspaceID, botID string) ([]platform.Token, error) {
	return s.listTokens(ctx, `SELECT k.id, k.bot_id, k.note, k.created_at FROM bot_keys k JOIN bots b ON b.id = k.bot_id
		WHERE b.workspace_id = ? AND k.bot_id = ? ORDER BY k.id`, workspaceID, botID)
}

func (s *Store) DeleteBotKey(ctx context.Context, workspaceID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `DELETE FROM bot_keys WHERE id = ? AND bot_id IN (SELECT id FROM bots WHERE workspace_id = ?)`, id, workspaceID)
	})
}

func (s *Store) GetBotKeyByHash(ctx context.Context, hash []byte) (platform.Token, string, error) {
	var t platform.Token
	var ws string
	var created int64
	err := s.queryRow(ctx, `SELECT k.id, k.bot_id, k.note, k.hash, k.created_at, b.workspace_id FROM bot_keys k JOIN bots b ON b.id = k.bot_id WHERE k.hash = ?`, hash).
		Scan(&t.ID, &t.OwnerID, &t.Note, &t.Hash, &created, &ws)
	t.CreatedAt = fromMicros(created)
	return t, ws, noRows(err)
}

func (s *Store) UpdateIntegrationStatus(ctx context.Context, botID string, ins []platform.BotIntegration) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, in := range ins {
			if _, err := s.exec(ctx, tx, `UPDATE bot_integrations SET status = ?, status_reason = ? WHERE bot_id = ? AND integration_id = ? AND name = ?`,
				in.Status, in.StatusReason, botID, in.IntegrationID, in.Name); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) CountInstallations(ctx context.Context, integrationID string) (int, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM bot_integrations WHERE integration_id = ?`, integrationID).Scan(&n)
	return n, err
}
