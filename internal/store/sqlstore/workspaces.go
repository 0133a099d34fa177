package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// workspaceProfile is the stored JSON of a workspace's descriptive fields.
type workspaceProfile struct {
	About          string   `json:"about,omitempty"`
	ProfilePicture string   `json:"profilePicture,omitempty"`
	ContactEmail   string   `json:"contactEmail,omitempty"`
	Website        string   `json:"website,omitempty"`
	SocialAccounts []string `json:"socialAccounts,omitempty"`
	IsPublic       bool     `json:"isPublic,omitempty"`
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Store) CreateWorkspace(ctx context.Context, w platform.Workspace, owner platform.Member) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.insertWorkspace(ctx, tx, w); err != nil {
			return err
		}
		return s.insertMember(ctx, tx, owner)
	})
}

func (s *Store) insertWorkspace(ctx context.Context, db querier, w platform.Workspace) error {
	_, err := s.exec(ctx, db, `INSERT INTO workspaces (id, name, owner_id, plan, billing_version, blocked, spending_limit, profile, handle, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.Name, w.OwnerID, w.Plan, w.BillingVersion, w.Blocked, w.SpendingLimit, profileJSON(w), nullString(w.Handle),
		micros(w.CreatedAt), micros(w.UpdatedAt))
	return err
}

func profileJSON(w platform.Workspace) string {
	b, _ := json.Marshal(workspaceProfile{w.About, w.ProfilePicture, w.ContactEmail, w.Website, w.SocialAccounts, w.IsPublic})
	return string(b)
}

const workspaceCols = `w.id, w.name, w.owner_id, w.plan, w.billing_version, w.blocked, w.spending_limit, w.profile, w.handle, w.created_at, w.updated_at,
	(SELECT COUNT(*) FROM bots b WHERE b.workspace_id = w.id)`

func scanWorkspace(sc interface{ Scan(...any) error }) (platform.Workspace, error) {
	var w platform.Workspace
	var profile string
	var handle sql.NullString
	var created, updated int64
	err := sc.Scan(&w.ID, &w.Name, &w.OwnerID, &w.Plan, &w.BillingVersion, &w.Blocked, &w.SpendingLimit, &profile, &handle,
		&created, &updated, &w.BotCount)
	if err != nil {
		return w, err
	}
	var p workspaceProfile
	if err := json.Unmarshal([]byte(profile), &p); err != nil {
		return w, err
	}
	w.About, w.ProfilePicture, w.ContactEmail, w.Website, w.SocialAccounts, w.IsPublic = p.About, p.ProfilePicture, p.ContactEmail, p.Website, p.SocialAccounts, p.IsPublic
	w.Handle = handle.String
	w.CreatedAt, w.UpdatedAt = fromMicros(created), fromMicros(updated)
	return w, nil
}

func (s *Store) GetWorkspace(ctx context.Context, id string) (platform.Workspace, error) {
	w, err := scanWorkspace(s.queryRow(ctx, `SELECT `+workspaceCols+` FROM workspaces w WHERE w.id = ?`, id))
	return w, noRows(err)
}

func (s *Store) GetWorkspaceByHandle(ctx context.Context, handle string) (platform.Workspace, error) {
	w, err := scanWorkspace(s.queryRow(ctx, `SELECT `+workspaceCols+` FROM workspaces w WHERE w.handle = ?`, handle))
	return w, noRows(err)
}

// ListWorkspaces lists the workspaces accountID is a member of, by id.
func (s *Store) ListWorkspaces(ctx context.Context, accountID string, f store.WorkspaceFilter) ([]platform.Workspace, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	query := `SELECT ` + workspaceCols + ` FROM workspaces w JOIN members m ON m.workspace_id = w.id WHERE m.account_id = ?`
	args := []any{accountID}
	if f.Handle != "" {
		query += ` AND w.handle = ?`
		args = append(args, f.Handle)
	}
	if cur != nil {
		query += ` AND w.id > ?`
		args = append(args, cur.ID)
	}
	query += ` ORDER BY w.id LIMIT ?`
	args = append(args, f.Limit+1)
	return s.workspacePage(ctx, query, args, f.Limit)
}

// workspacePage runs query (its args end with the limit plus one) and
// returns the page of workspaces it finds, by id, with the next page's
// token.
func (s *Store) workspacePage(ctx context.Context, query string, args []any, limit int) ([]platform.Workspace, string, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := []platform.Workspace{}
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, limit, func(w platform.Workspace) store.Cursor { return store.Cursor{ID: w.ID} })
	return page, next, nil
}

// ListPublicWorkspaces lists the workspaces whose profile is public, by id:
// those of f.IDs when given, whose name or handle holds f.Search (in any
// case) when given.
func (s *Store) ListPublicWorkspaces(ctx context.Context, f store.PublicWorkspaceFilter) ([]platform.Workspace, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	t := s.d.Tables
	query := `SELECT ` + workspaceCols + ` FROM workspaces w WHERE ` + t.JSONAt("w.profile") + ` = ` + t.JSONValue
	args := []any{t.PathArg([]string{"isPublic"}), t.JSONArg(true)}
	if len(f.IDs) > 0 {
		query += ` AND w.id IN (` + placeholders(len(f.IDs)) + `)`
		args = append(args, anys(f.IDs)...)
	}
	if f.Search != "" {
		query += ` AND (` + s.d.Contains("LOWER(w.name)") + ` OR ` + s.d.Contains("LOWER(COALESCE(w.handle, ''))") + `)`
		q := strings.ToLower(f.Search)
		args = append(args, q, q)
	}
	if cur != nil {
		query += ` AND w.id > ?`
		args = append(args, cur.ID)
	}
	return s.workspacePage(ctx, query+` ORDER BY w.id LIMIT ?`, append(args, f.Limit+1), f.Limit)
}

func (s *Store) UpdateWorkspace(ctx context.Context, w platform.Workspace) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `UPDATE workspaces SET name = ?, plan = ?, billing_version = ?, blocked = ?, spending_limit = ?, profile = ?, handle = ?, updated_at = ? WHERE id = ?`,
			w.Name, w.Plan, w.BillingVersion, w.Blocked, w.SpendingLimit, profileJSON(w), nullString(w.Handle), micros(w.UpdatedAt), w.ID)
	})
}

func (s *Store) DeleteWorkspace(ctx context.Context, id string) ([]string, error) {
	var blobs []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if blobs, err = s.dropFiles(ctx, tx, "", `workspace_id = ?`, id); err != nil {
			return err
		}
		if err := s.dropTables(ctx, tx, `bot_id IN (SELECT id FROM bots WHERE workspace_id = ?)`, id); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE subject IN (SELECT c.id FROM conversations c JOIN bots b ON b.id = c.bot_id WHERE b.workspace_id = ?)
			OR subject IN (SELECT 'bot:' || id FROM bots WHERE workspace_id = ?)`, id, id); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `DELETE FROM workspaces WHERE id = ?`, id)
	})
	return blobs, err
}

const memberCols = `m.id, m.workspace_id, m.account_id, a.email, a.display_name, m.role, m.created_at`

func scanMember(sc interface{ Scan(...any) error }) (platform.Member, error) {
	var m platform.Member
	var created int64
	err := sc.Scan(&m.ID, &m.WorkspaceID, &m.AccountID, &m.Email, &m.DisplayName, &m.Role, &created)
	m.CreatedAt = fromMicros(created)
	return m, err
}

func (s *Store) GetMember(ctx context.Context, workspaceID, accountID string) (platform.Member, error) {
	m, err := scanMember(s.queryRow(ctx, `SELECT `+memberCols+` FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.workspace_id = ? AND m.account_id = ?`, workspaceID, accountID))
	return m, noRows(err)
}

func (s *Store) GetMemberByID(ctx context.Context, workspaceID, id string) (platform.Member, error) {
	m, err := scanMember(s.queryRow(ctx, `SELECT `+memberCols+` FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.workspace_id = ? AND m.id = ?`, workspaceID, id))
	return m, noRows(err)
}

func (s *Store) ListMembers(ctx context.Context, workspaceID string, p store.Page) ([]platform.Member, string, error) {
	cur, err := store.DecodeCursor(p.Token)
	if err != nil {
		return nil, "", err
	}
	query := `SELECT ` + memberCols + ` FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.workspace_id = ?`
	args := []any{workspaceID}
	if cur != nil {
		query += ` AND m.id > ?`
		args = append(args, cur.ID)
	}
	query += ` ORDER BY m.id LIMIT ?`
	args = append(args, p.Limit+1)
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := []platform.Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	page, next := pageOf(out, p.Limit, func(m platform.Member) store.Cursor { return store.Cursor{ID: m.ID} })
	return page, next, nil
}

func (s *Store) insertMember(ctx context.Context, db querier, m platform.Member) error {
	_, err := s.exec(ctx, db, `INSERT INTO members (id, workspace_id, account_id, role, created_at) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.WorkspaceID, m.AccountID, string(m.Role), micros(m.CreatedAt))
	return err
}

func (s *Store) CreateMember(ctx context.Context, m platform.Member) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.insertMember(ctx, tx, m) })
}

func (s *Store) UpdateMemberRole(ctx context.Context, workspaceID, id string, role platform.Role) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `UPDATE members SET role = ? WHERE workspace_id = ? AND id = ?`, string(role), workspaceID, id)
	})
}

func (s *Store) DeleteMember(ctx context.Context, workspaceID, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.execOne(ctx, tx, `DELETE FROM members WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	})
}
