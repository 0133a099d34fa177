package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

const fileCols = `f.id, f.bot_id, f.workspace_id, f.scope, f.key, f.status, f.size, f.declared_size, f.content_type, f.tags,
	f.metadata, f.access_policies, f.index_requested, f.public_now, f.failed_reason, f.indexing_stack, f.expires_at,
	f.owner, f.generation, f.blob_key, f.sha256, f.counted, f.extra_bytes, f.created_at, f.updated_at`

func scanFile(sc interface{ Scan(...any) error }) (platform.File, error) {
	var f platform.File
	var size, expires sql.NullInt64
	var tags, meta, policies, owner []byte
	var created, updated int64
	err := sc.Scan(&f.ID, &f.BotID, &f.WorkspaceID, &f.Scope, &f.Key, &f.Status, &size, &f.DeclaredSize, &f.ContentType, &tags,
		&meta, &policies, &f.Index, &f.PublicNow, &f.FailedReason, &f.IndexingStack, &expires,
		&owner, &f.Generation, &f.BlobKey, &f.SHA256, &f.Counted, &f.ExtraBytes, &created, &updated)
	if err != nil {
		return f, err
	}
	if size.Valid {
		f.Size = &size.Int64
	}
	f.ExpiresAt = fromNullMicros(expires)
	f.CreatedAt, f.UpdatedAt = fromMicros(created), fromMicros(updated)
	for _, x := range []struct {
		raw []byte
		dst any
	}{{tags, &f.Tags}, {meta, &f.Metadata}, {policies, &f.AccessPolicies}, {owner, &f.Owner}} {
		if err := json.Unmarshal(x.raw, x.dst); err != nil {
			return f, err
		}
	}
	return f, nil
}

func fileJSON(f platform.File) (tags, meta, policies, owner string) {
	if f.Tags == nil {
		f.Tags = map[string]string{}
	}
	if f.Metadata == nil {
		f.Metadata = map[string]any{}
	}
	if f.AccessPolicies == nil {
		f.AccessPolicies = []string{}
	}
	t, _ := json.Marshal(f.Tags)
	m, _ := json.Marshal(f.Metadata)
	p, _ := json.Marshal(f.AccessPolicies)
	o, _ := json.Marshal(f.Owner)
	return string(t), string(m), string(p), string(o)
}

func nullSize(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (s *Store) GetBotWorkspace(ctx context.Context, botID string) (string, error) {
	var ws string
	err := s.queryRow(ctx, `SELECT workspace_id FROM bots WHERE id = ?`, botID).Scan(&ws)
	return ws, noRows(err)
}

// getFile reads a file inside a transaction. On PostgreSQL it locks the
// row, so that concurrent writers of one file (an upload completing, a
// replace, a delete) run one after the other and each sees the previous
// one's result; SQLite runs one write transaction at a time anyway.
func (s *Store) getFile(ctx context.Context, tx *sql.Tx, where string, args ...any) (platform.File, error) {
	st, err := s.txStmt(ctx, tx, `SELECT `+fileCols+` FROM files f WHERE `+where+s.d.ForUpdate)
	if err != nil {
		return platform.File{}, err
	}
	f, err := scanFile(st.QueryRowContext(ctx, args...))
	return f, noRows(err)
}

func (s *Store) GetFile(ctx context.Context, botID, id string) (platform.File, error) {
	if botID == "" {
		f, err := scanFile(s.queryRow(ctx, `SELECT `+fileCols+` FROM files f WHERE f.id = ?`, id))
		return f, noRows(err)
	}
	f, err := scanFile(s.queryRow(ctx, `SELECT `+fileCols+` FROM files f WHERE f.bot_id = ? AND f.id = ?`, botID, id))
	return f, noRows(err)
}

func (s *Store) GetFiles(ctx context.Context, ids []string) ([]platform.File, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.query(ctx, `SELECT `+fileCols+` FROM files f WHERE f.id IN (`+placeholders(len(ids))+`)`, anys(ids)...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanFile)
}

func (s *Store) GetFileByKey(ctx context.Context, botID, scope, key string) (platform.File, error) {
	f, err := scanFile(s.queryRow(ctx, `SELECT `+fileCols+` FROM files f WHERE f.bot_id = ? AND f.scope = ? AND f.key = ?`, botID, scope, key))
	return f, noRows(err)
}

// dropFiles prepares the removal of the files matching where (which the
// caller then deletes, or its delete of their bot or workspace cascades
// to): it locks
// them, releases their storage from workspaceID's usage (unless empty: the
// workspace itself goes), deletes their jobs, and returns their content's
// blob keys for removal after commit.
func (s *Store) dropFiles(ctx context.Context, tx *sql.Tx, workspaceID, where string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id, blob_key, COALESCE(size, 0), counted, index_requested, extra_bytes FROM files WHERE `+where+s.d.ForUpdate), args...)
	if err != nil {
		return nil, err
	}
	var ids, blobs []string
	var fileBytes, vectorBytes int64
	for rows.Next() {
		var id, key string
		var size, extra int64
		var counted, indexed bool
		if err := rows.Scan(&id, &key, &size, &counted, &indexed, &extra); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
		if key != "" {
			blobs = append(blobs, key)
		}
		fileBytes += extra
		if counted {
			fileBytes += size
			if indexed {
				vectorBytes += size
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if workspaceID != "" && fileBytes > 0 {
		if _, err := s.exec(ctx, tx, `UPDATE workspace_storage SET file_bytes = file_bytes - ?, vector_bytes = vector_bytes - ? WHERE workspace_id = ?`,
			fileBytes, vectorBytes, workspaceID); err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE subject = ?`, id); err != nil {
			return nil, err
		}
	}
	return blobs, nil
}

// release gives back the storage counted for f's content and what its
// indexing stored besides (ExtraBytes).
func (s *Store) release(ctx context.Context, tx *sql.Tx, f platform.File) error {
	var size, vector int64
	if f.Counted && f.Size != nil {
		size = *f.Size
		if f.Index {
			vector = size
		}
	}
	if size+f.ExtraBytes == 0 {
		return nil
	}
	_, err := s.exec(ctx, tx, `UPDATE workspace_storage SET file_bytes = file_bytes - ?, vector_bytes = vector_bytes - ? WHERE workspace_id = ?`,
		size+f.ExtraBytes, vector, f.WorkspaceID)
	return err
}

func (s *Store) writeFileTags(ctx context.Context, tx *sql.Tx, f platform.File) error {
	if _, err := s.exec(ctx, tx, `DELETE FROM file_tags WHERE file_id = ?`, f.ID); err != nil {
		return err
	}
	for k, v := range f.Tags {
		if _, err := s.exec(ctx, tx, `INSERT INTO file_tags (file_id, bot_id, key, value) VALUES (?, ?, ?, ?)`, f.ID, f.BotID, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) PutFile(ctx context.Context, f platform.File) (platform.File, *platform.File, error) {
	var replaced *platform.File
	err := s.tx(ctx, func(tx *sql.Tx) error {
		old, err := s.getFile(ctx, tx, `f.bot_id = ? AND f.scope = ? AND f.key = ?`, f.BotID, f.Scope, f.Key)
		switch {
		case errors.Is(err, platform.ErrNotFound):
			f.Generation = 1
		case err != nil:
			return err
		}
		tags, meta, policies, owner := fileJSON(f)
		if err == nil {
			if err := s.release(ctx, tx, old); err != nil {
				return err
			}
			// Jobs about the replaced content are moot.
			if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE subject = ?`, old.ID); err != nil {
				return err
			}
			// So are its passages.
			if _, err := s.exec(ctx, tx, `DELETE FROM passages WHERE file_id = ?`, old.ID); err != nil {
				return err
			}
			replaced = &old
			f.ID, f.CreatedAt, f.Generation = old.ID, old.CreatedAt, old.Generation+1
			if _, err := s.exec(ctx, tx, `UPDATE files SET workspace_id = ?, status = ?, size = ?, declared_size = ?, content_type = ?, tags = ?,
				metadata = ?, access_policies = ?, shared = ?, index_requested = ?, public_now = ?, failed_reason = ?, indexing_stack = ?,
				expires_at = ?, owner = ?, generation = ?, blob_key = ?, sha256 = ?, counted = ?, extra_bytes = 0, updated_at = ? WHERE id = ?`,
				f.WorkspaceID, f.Status, nullSize(f.Size), f.DeclaredSize, f.ContentType, tags,
				meta, policies, f.Has(platform.PolicyIntegrations), f.Index, f.PublicNow, f.FailedReason, f.IndexingStack,
				nullMicros(f.ExpiresAt), owner, f.Generation, f.BlobKey, f.SHA256, f.Counted, micros(f.UpdatedAt), f.ID); err != nil {
				return err
			}
		} else if _, err := s.exec(ctx, tx, `INSERT INTO files (id, bot_id, workspace_id, scope, key, status, size, declared_size, content_type, tags,
			metadata, access_policies, shared, index_requested, public_now, failed_reason, indexing_stack, expires_at, owner, generation,
			blob_key, sha256, counted, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			f.ID, f.BotID, f.WorkspaceID, f.Scope, f.Key, f.Status, nullSize(f.Size), f.DeclaredSize, f.ContentType, tags,
			meta, policies, f.Has(platform.PolicyIntegrations), f.Index, f.PublicNow, f.FailedReason, f.IndexingStack, nullMicros(f.ExpiresAt), owner, f.Generation,
			f.BlobKey, f.SHA256, f.Counted, micros(f.CreatedAt), micros(f.UpdatedAt)); err != nil {
			return err
		}
		if replaced != nil && maps.Equal(replaced.Tags, f.Tags) {
			return nil // the tag index already holds these tags
		}
		return s.writeFileTags(ctx, tx, f)
	})
	return f, replaced, err
}

func (s *Store) UpdateFile(ctx context.Context, f platform.File) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		tags, meta, policies, _ := fileJSON(f)
		if err := s.execOne(ctx, tx, `UPDATE files SET tags = ?, metadata = ?, access_policies = ?, shared = ?, expires_at = ?, updated_at = ?
			WHERE bot_id = ? AND id = ?`,
			tags, meta, policies, f.Has(platform.PolicyIntegrations), nullMicros(f.ExpiresAt), micros(f.UpdatedAt), f.BotID, f.ID); err != nil {
			return err
		}
		return s.writeFileTags(ctx, tx, f)
	})
}

func (s *Store) DeleteFile(ctx context.Context, botID, id string) (platform.File, error) {
	return s.deleteFile(ctx, `f.bot_id = ? AND f.id = ?`, botID, id)
}

func (s *Store) DeleteExpiredFile(ctx context.Context, id string, now time.Time) (platform.File, error) {
	return s.deleteFile(ctx, `f.id = ? AND f.expires_at <= ?`, id, micros(now))
}

// deleteFile removes the file matching where, releasing its storage.
func (s *Store) deleteFile(ctx context.Context, where string, args ...any) (platform.File, error) {
	var f platform.File
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if f, err = s.getFile(ctx, tx, where, args...); err != nil {
			return err
		}
		if err := s.release(ctx, tx, f); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `DELETE FROM jobs WHERE subject = ?`, f.ID); err != nil {
			return err
		}
		return s.execOne(ctx, tx, `DELETE FROM files WHERE id = ?`, f.ID)
	})
	return f, err
}

func (s *Store) CompleteUpload(ctx context.Context, u store.Upload) (platform.File, error) {
	var f platform.File
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if f, err = s.getFile(ctx, tx, `f.id = ?`, u.FileID); err != nil {
			return err
		}
		if f.Generation != u.Generation || f.Status != platform.FileUploadPending {
			return platform.ErrConflict
		}
		vector := int64(0)
		if f.Index {
			vector = u.Size
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO workspace_storage (workspace_id) VALUES (?) ON CONFLICT DO NOTHING`, f.WorkspaceID); err != nil {
			return err
		}
		// One conditional update checks and takes the space, so concurrent
		// uploads cannot overshoot a limit on either database. Only indexed
		// files need (and are held to) vector storage.
		take := `UPDATE workspace_storage SET file_bytes = file_bytes + ?, vector_bytes = vector_bytes + ?
			WHERE workspace_id = ? AND file_bytes + ? <= ?`
		args := []any{u.Size, vector, f.WorkspaceID, u.Size, u.MaxStorage}
		if f.Index {
			take += ` AND vector_bytes + ? <= ?`
			args = append(args, vector, u.MaxVector)
		}
		n, err := s.exec(ctx, tx, take, args...)
		if err != nil {
			return err
		}
		if n == 0 {
			st, err := s.storage(ctx, tx, f.WorkspaceID)
			if err != nil {
				return err
			}
			if st.FileBytes+u.Size > u.MaxStorage {
				return &store.QuotaError{Quota: "file storage", Used: st.FileBytes, Limit: u.MaxStorage, Size: u.Size}
			}
			return &store.QuotaError{Quota: "vector storage", Used: st.VectorBytes, Limit: u.MaxVector, Size: vector}
		}
		f.Status, f.Size, f.BlobKey, f.SHA256, f.Counted, f.UpdatedAt = u.Status, &u.Size, u.BlobKey, u.SHA256, true, u.Now
		if err := s.execOne(ctx, tx, `UPDATE files SET status = ?, size = ?, blob_key = ?, sha256 = ?, counted = ?, updated_at = ? WHERE id = ?`,
			f.Status, u.Size, u.BlobKey, u.SHA256, true, micros(u.Now), f.ID); err != nil {
			return err
		}
		if u.Status != platform.FileIndexPending {
			return nil
		}
		payload, _ := json.Marshal(platform.IndexJob{FileID: f.ID, Generation: f.Generation})
		_, err = s.insertJob(ctx, tx, platform.Job{ID: platform.NewID("job_"), Kind: platform.JobIndexFile, Subject: f.ID, Payload: payload, RunAfter: u.Now, CreatedAt: u.Now}, "")
		return err
	})
	return f, err
}

func (s *Store) FailUpload(ctx context.Context, id string, gen int64, reason string, now time.Time) (platform.File, error) {
	var f platform.File
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.execOne(ctx, tx, `UPDATE files SET status = ?, failed_reason = ?, updated_at = ? WHERE id = ? AND generation = ? AND status = ?`,
			platform.FileUploadFailed, reason, micros(now), id, gen, platform.FileUploadPending); err != nil {
			if errors.Is(err, platform.ErrNotFound) {
				return platform.ErrConflict
			}
			return err
		}
		var err error
		f, err = s.getFile(ctx, tx, `f.id = ?`, id)
		return err
	})
	return f, err
}

func (s *Store) ExpiredFiles(ctx context.Context, now time.Time, limit int) ([]platform.File, error) {
	rows, err := s.query(ctx, `SELECT `+fileCols+` FROM files f WHERE f.expires_at IS NOT NULL AND f.expires_at <= ? ORDER BY f.expires_at LIMIT ?`, micros(now), limit)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanFile)
}
