package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

var workflowTags = tagTable{"workflow_tags", "workflow_id"}

const workflowCols = `w.id, w.bot_id, w.name, w.status, w.input, w.output, w.parent_id, w.conversation_id, w.user_id, w.tags,
	w.failure_reason, w.event_id, w.timeout_at, w.completed_at, w.version, w.created_at, w.updated_at`

func scanWorkflow(sc interface{ Scan(...any) error }) (platform.Workflow, error) {
	var w platform.Workflow
	var input, output, tags []byte
	var timeout, c, u int64
	var completed sql.NullInt64
	err := sc.Scan(&w.ID, &w.BotID, &w.Name, &w.Status, &input, &output, &w.ParentID, &w.ConversationID, &w.UserID, &tags,
		&w.FailureReason, &w.EventID, &timeout, &completed, &w.Version, &c, &u)
	w.Input, w.Output = input, output
	w.TimeoutAt, w.CompletedAt, w.CreatedAt, w.UpdatedAt = fromMicros(timeout), fromNullMicros(completed), fromMicros(c), fromMicros(u)
	if err == nil {
		w.Tags, err = readTags(tags)
	}
	return w, noRows(err)
}

// CreateWorkflow inserts w and queues the jobs that deliver its updates
// (its start, its time-out), at once.
func (s *Store) CreateWorkflow(ctx context.Context, w platform.Workflow, jobs ...platform.Job) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO workflows (id, bot_id, name, status, input, output, parent_id, conversation_id, user_id, tags,
			failure_reason, event_id, timeout_at, completed_at, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
			w.ID, w.BotID, w.Name, w.Status, string(w.Input), string(w.Output), w.ParentID, w.ConversationID, w.UserID, tagsJSON(w.Tags),
			w.FailureReason, w.EventID, micros(w.TimeoutAt), nullMicros(w.CompletedAt), micros(w.CreatedAt), micros(w.UpdatedAt)); err != nil {
			return err
		}
		if err := s.writeTags(ctx, tx, workflowTags, w.ID, w.BotID, w.Tags); err != nil {
			return err
		}
		return s.queue(ctx, tx, jobs)
	})
}

// queue inserts jobs in tx; a job whose id exists is already queued.
func (s *Store) queue(ctx context.Context, tx *sql.Tx, jobs []platform.Job) error {
	for _, j := range jobs {
		if _, err := s.insertJob(ctx, tx, j, `NOT EXISTS (SELECT 1 FROM jobs WHERE id = ?)`, j.ID); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) GetWorkflow(ctx context.Context, botID, id string) (platform.Workflow, error) {
	return scanWorkflow(s.queryRow(ctx, `SELECT `+workflowCols+` FROM workflows w WHERE w.bot_id = ? AND w.id = ?`, botID, id))
}

// UpdateWorkflow writes w over version w.Version (ErrConflict when it was
// written since, or has gone) and queues jobs with it.
func (s *Store) UpdateWorkflow(ctx context.Context, w platform.Workflow, jobs ...platform.Job) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		n, err := s.exec(ctx, tx, `UPDATE workflows SET status = ?, output = ?, user_id = ?, tags = ?, failure_reason = ?, event_id = ?, timeout_at = ?,
			completed_at = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ?`,
			w.Status, string(w.Output), w.UserID, tagsJSON(w.Tags), w.FailureReason, w.EventID, micros(w.TimeoutAt), nullMicros(w.CompletedAt),
			micros(w.UpdatedAt), w.ID, w.Version)
		if err != nil {
			return err
		}
		if n == 0 {
			return platform.ErrConflict
		}
		if err := s.writeTags(ctx, tx, workflowTags, w.ID, w.BotID, w.Tags); err != nil {
			return err
		}
		return s.queue(ctx, tx, jobs)
	})
}

func (s *Store) DeleteWorkflow(ctx context.Context, botID, id string) error {
	return s.execOne(ctx, s.w, `DELETE FROM workflows WHERE bot_id = ? AND id = ?`, botID, id)
}

// ListWorkflows lists a bot's workflows, newest first.
func (s *Store) ListWorkflows(ctx context.Context, f store.WorkflowFilter) ([]platform.Workflow, string, error) {
	cur, err := store.DecodeCursor(f.Token)
	if err != nil {
		return nil, "", err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + workflowCols + ` FROM workflows w WHERE w.bot_id = ?`)
	args := []any{f.BotID}
	for _, c := range []struct{ col, v string }{{"w.name", f.Name}, {"w.conversation_id", f.ConversationID}, {"w.user_id", f.UserID},
		{"w.parent_id", f.ParentID}} {
		if c.v != "" {
			q.WriteString(` AND ` + c.col + ` = ?`)
			args = append(args, c.v)
		}
	}
	if len(f.Statuses) > 0 {
		q.WriteString(` AND w.status IN (` + placeholders(len(f.Statuses)) + `)`)
		for _, st := range f.Statuses {
			args = append(args, st)
		}
	}
	args = tagFilter(&q, args, workflowTags.name+` t WHERE t.workflow_id = w.id`, f.Tags, nil)
	args, order := dated(&q, args, "w.created_at", "w.id", store.DateRange{}, !f.Oldest, cur)
	return listRows(ctx, s, q.String()+order, args, f.Limit, scanWorkflow, func(w platform.Workflow) store.Cursor {
		return store.Cursor{Value: micros(w.CreatedAt), ID: w.ID}
	})
}
