package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Workflows: the bot creates them; the platform tells the bot's handlers
// when one is to start (workflow_started, for a workflow created pending)
// and when one passes its timeoutAt while still active (workflow_timedout:
// it is then timedout), as workflow_update events.

// DefaultWorkflowTimeout is how long a workflow may stay active when its
// creator gives no timeoutAt.
const DefaultWorkflowTimeout = 7 * 24 * time.Hour

// Updates a workflow_update event carries (its payload's type).
const (
	WorkflowStarted  = "workflow_started"
	WorkflowTimedOut = "workflow_timedout"
)

// WorkflowInput is the body of createWorkflow and getOrCreateWorkflow.
type WorkflowInput struct {
	Name                      string            `json:"name"`
	Input                     json.RawMessage   `json:"input"`
	ParentWorkflowID          string            `json:"parentWorkflowId"`
	ConversationID            string            `json:"conversationId"`
	UserID                    string            `json:"userId"`
	TimeoutAt                 string            `json:"timeoutAt"`
	Tags                      map[string]string `json:"tags"`
	Status                    string            `json:"status"`
	EventID                   string            `json:"eventId"`
	DiscriminateByTags        []string          `json:"discriminateByTags"`
	DiscriminateByStatusGroup string            `json:"discriminateByStatusGroup"`
}

// WorkflowUpdate is the body of updateWorkflow; a nil field is unchanged.
type WorkflowUpdate struct {
	Output        json.RawMessage    `json:"output"`
	TimeoutAt     *string            `json:"timeoutAt"`
	Status        *string            `json:"status"`
	FailureReason *string            `json:"failureReason"`
	Tags          map[string]*string `json:"tags"`
	UserID        *string            `json:"userId"`
	EventID       *string            `json:"eventId"`
}

// WorkflowView is a workflow with the ids the bot sees.
type WorkflowView struct {
	platform.Workflow
	ConversationFID, UserFID string
}

// WorkflowJSON renders a workflow as the Runtime API returns it.
func WorkflowJSON(w WorkflowView) map[string]any {
	tags := w.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	out := map[string]any{"id": w.ID, "name": w.Name, "status": w.Status, "input": rawObject(w.Input), "output": rawObject(w.Output),
		"createdAt": platform.FormatTime(w.CreatedAt), "updatedAt": platform.FormatTime(w.UpdatedAt),
		"timeoutAt": platform.FormatTime(w.TimeoutAt), "tags": tags}
	for k, v := range map[string]string{"parentWorkflowId": w.ParentID, "conversationId": w.ConversationFID, "userId": w.UserFID, "failureReason": w.FailureReason} {
		if v != "" {
			out[k] = v
		}
	}
	if w.CompletedAt != nil {
		out["completedAt"] = platform.FormatTime(*w.CompletedAt)
	}
	return out
}

func parseTimeout(field, v string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, platform.Invalid(field, "must be an ISO 8601 date and time")
	}
	if !t.After(now) {
		return t, platform.Invalid(field, "must be in the future")
	}
	return t.UTC(), nil
}

// workflowJob is the job that delivers a workflow_update to the bot's
// handlers at at. Its id names the update (and, for a time-out, the time),
// so queuing it twice queues it once.
func workflowJob(w platform.Workflow, update string, at time.Time) platform.Job {
	subject := platform.JobSubjectBot(w.BotID)
	if w.ConversationID != "" {
		subject = w.ConversationID
	}
	id := "job_wf" + update[len("workflow"):] + "_" + w.ID
	if update == WorkflowTimedOut {
		id = fmt.Sprintf("%s_%d", id, at.UnixMicro())
	}
	payload, _ := json.Marshal(platform.BotEventJob{Type: platform.BotEventWorkflow, BotID: w.BotID, WorkflowID: w.ID, Update: update,
		ConversationID: w.ConversationID, UserID: w.UserID})
	return platform.Job{ID: id, Kind: platform.JobBotEvent, Subject: subject, Payload: payload, RunAfter: at, CreatedAt: at}
}

// CreateWorkflow creates a workflow of the bot. One created pending is
// started: its workflow_started update goes to the bot's handlers.
func (s *Service) CreateWorkflow(ctx context.Context, botID string, in WorkflowInput) (WorkflowView, error) {
	if in.DiscriminateByTags != nil || in.DiscriminateByStatusGroup != "" {
		return WorkflowView{}, platform.Invalid("discriminateByTags", "is only for getOrCreateWorkflow")
	}
	return s.createWorkflow(ctx, botID, in)
}

func (s *Service) createWorkflow(ctx context.Context, botID string, in WorkflowInput) (WorkflowView, error) {
	if in.Name == "" || len(in.Name) > 200 {
		return WorkflowView{}, platform.Invalid("name", "is required (at most 200 characters)")
	}
	switch in.Status {
	case platform.WorkflowPending, platform.WorkflowInProgress, platform.WorkflowListening:
	default:
		return WorkflowView{}, platform.Invalid("status", "must be pending, in_progress or listening")
	}
	if err := platform.CheckTags("tags", in.Tags); err != nil {
		return WorkflowView{}, err
	}
	now := s.clock.Now()
	w := platform.Workflow{ID: platform.NewID("wfl_"), BotID: botID, Name: in.Name, Status: in.Status, Input: rawObject(in.Input),
		Output: json.RawMessage(`{}`), EventID: in.EventID, Tags: created(in.Tags), TimeoutAt: now.Add(DefaultWorkflowTimeout), CreatedAt: now, UpdatedAt: now}
	v := WorkflowView{}
	if in.TimeoutAt != "" {
		t, err := parseTimeout("timeoutAt", in.TimeoutAt, now)
		if err != nil {
			return v, err
		}
		w.TimeoutAt = t
	}
	if in.ParentWorkflowID != "" {
		if _, err := s.store.GetWorkflow(ctx, botID, in.ParentWorkflowID); err != nil {
			return v, refNotFound(err, "parentWorkflowId", "workflow", in.ParentWorkflowID)
		}
		w.ParentID = in.ParentWorkflowID
	}
	if in.ConversationID != "" {
		c, err := s.Conversation(ctx, botID, in.ConversationID)
		if err != nil {
			return v, err
		}
		w.ConversationID, v.ConversationFID = c.ID, c.FID
	}
	if in.UserID != "" {
		u, err := s.User(ctx, botID, in.UserID)
		if err != nil {
			return v, err
		}
		w.UserID, v.UserFID = u.ID, u.FID
	}
	jobs := []platform.Job{workflowJob(w, WorkflowTimedOut, w.TimeoutAt)}
	if w.Status == platform.WorkflowPending {
		jobs = append(jobs, workflowJob(w, WorkflowStarted, now))
	}
	if err := s.store.CreateWorkflow(ctx, w, jobs...); err != nil {
		return v, err
	}
	v.Workflow = w
	v.Version = 1
	return v, nil
}

func refNotFound(err error, field, kind, id string) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.Errorf(platform.TypeReferenceNotFound, "%s: %s %q not found", field, kind, id)
	}
	return err
}

// statusGroup lists the statuses of a discriminateByStatusGroup.
func statusGroup(g string) ([]string, error) {
	switch g {
	case "":
		return nil, nil
	case "active":
		return []string{platform.WorkflowPending, platform.WorkflowInProgress, platform.WorkflowListening, platform.WorkflowPaused}, nil
	case "finished":
		return []string{platform.WorkflowCompleted, platform.WorkflowFailed, platform.WorkflowTimedOut, platform.WorkflowCancelled}, nil
	}
	return nil, platform.Invalid("discriminateByStatusGroup", "must be active or finished")
}

// GetOrCreateWorkflow returns the bot's newest workflow of that name whose
// tags match the discriminating tags (and, when given, in that status
// group), or creates one.
func (s *Service) GetOrCreateWorkflow(ctx context.Context, botID string, in WorkflowInput) (WorkflowView, bool, error) {
	statuses, err := statusGroup(in.DiscriminateByStatusGroup)
	if err != nil {
		return WorkflowView{}, false, err
	}
	by, err := discriminators(in.Tags, in.DiscriminateByTags)
	if err != nil {
		return WorkflowView{}, false, err
	}
	defer s.lock(botID, "workflow")()
	found, _, err := s.store.ListWorkflows(ctx, store.WorkflowFilter{BotID: botID, Name: in.Name, Tags: anyOf(by), Statuses: statuses, Page: store.Page{Limit: 1}})
	if err != nil {
		return WorkflowView{}, false, err
	}
	if len(found) > 0 {
		return s.workflowView(ctx, botID, found[0]), false, nil
	}
	in.DiscriminateByTags, in.DiscriminateByStatusGroup = nil, ""
	v, err := s.createWorkflow(ctx, botID, in)
	return v, true, err
}

func (s *Service) workflowView(ctx context.Context, botID string, w platform.Workflow) WorkflowView {
	v := WorkflowView{Workflow: w}
	v.ConversationFID, v.UserFID = s.visibleIDs(ctx, botID, w.ConversationID, w.UserID)
	return v
}

// Workflow returns a workflow of the bot.
func (s *Service) Workflow(ctx context.Context, botID, id string) (WorkflowView, error) {
	w, err := s.store.GetWorkflow(ctx, botID, id)
	if err != nil {
		return WorkflowView{}, notFound(err, "workflow", id)
	}
	return s.workflowView(ctx, botID, w), nil
}

// UpdateWorkflow changes a workflow. A finished workflow (completed,
// failed, timedout, cancelled) keeps its status; finishing one dates it.
func (s *Service) UpdateWorkflow(ctx context.Context, botID, id string, in WorkflowUpdate) (WorkflowView, error) {
	for range patchAttempts {
		w, err := s.store.GetWorkflow(ctx, botID, id)
		if err != nil {
			return WorkflowView{}, notFound(err, "workflow", id)
		}
		var jobs []platform.Job
		now := s.clock.Now()
		if in.Status != nil && *in.Status != w.Status {
			switch *in.Status {
			case platform.WorkflowCompleted, platform.WorkflowCancelled, platform.WorkflowListening, platform.WorkflowPaused,
				platform.WorkflowFailed, platform.WorkflowInProgress:
			default:
				return WorkflowView{}, platform.Invalid("status", "must be one of completed, cancelled, listening, paused, failed, in_progress")
			}
			if !platform.WorkflowActive(w.Status) {
				return WorkflowView{}, platform.Invalid("status", "workflow %q has finished (%s); its status cannot change", id, w.Status)
			}
			w.Status = *in.Status
			if !platform.WorkflowActive(w.Status) {
				w.CompletedAt = &now
			}
		}
		if in.Output != nil {
			w.Output = rawObject(in.Output)
		}
		if in.FailureReason != nil {
			if len(*in.FailureReason) > 2000 {
				return WorkflowView{}, platform.Invalid("failureReason", "at most 2000 characters")
			}
			w.FailureReason = *in.FailureReason
		}
		if in.EventID != nil {
			w.EventID = *in.EventID
		}
		if in.UserID != nil {
			u, err := s.User(ctx, botID, *in.UserID)
			if err != nil {
				return WorkflowView{}, err
			}
			w.UserID = u.ID
		}
		if in.TimeoutAt != nil {
			t, err := parseTimeout("timeoutAt", *in.TimeoutAt, now)
			if err != nil {
				return WorkflowView{}, err
			}
			w.TimeoutAt = t
			jobs = append(jobs, workflowJob(w, WorkflowTimedOut, t))
		}
		if in.Tags != nil {
			patch := map[string]string{}
			for k, v := range in.Tags {
				patch[k] = ""
				if v != nil {
					patch[k] = *v
				}
			}
			if err := platform.CheckTags("tags", patch); err != nil {
				return WorkflowView{}, err
			}
			w.Tags = merged(w.Tags, patch)
		}
		w.UpdatedAt = now
		err = s.store.UpdateWorkflow(ctx, w, jobs...)
		if err == nil {
			w.Version++
			return s.workflowView(ctx, botID, w), nil
		}
		if !errors.Is(err, platform.ErrConflict) {
			return WorkflowView{}, err
		}
	}
	return WorkflowView{}, platform.Errorf(platform.TypeResourceLocked, "workflow %q is being written by others; try again", id)
}

// DeleteWorkflow deletes a workflow of the bot.
func (s *Service) DeleteWorkflow(ctx context.Context, botID, id string) error {
	return notFound(s.store.DeleteWorkflow(ctx, botID, id), "workflow", id)
}

// WorkflowFilter is listWorkflows' query.
type WorkflowFilter struct {
	store.Page
	Name, ConversationID, UserID, ParentWorkflowID string
	Statuses                                       []string
	Tags                                           map[string][]string
}

// ListWorkflows lists the bot's workflows, newest first.
func (s *Service) ListWorkflows(ctx context.Context, botID string, f WorkflowFilter) ([]WorkflowView, string, error) {
	sf := store.WorkflowFilter{Page: f.Page, BotID: botID, Name: f.Name, ParentID: f.ParentWorkflowID, Statuses: f.Statuses, Tags: f.Tags}
	for _, st := range f.Statuses {
		if !platform.WorkflowActive(st) && st != platform.WorkflowCompleted && st != platform.WorkflowFailed &&
			st != platform.WorkflowTimedOut && st != platform.WorkflowCancelled {
			return nil, "", platform.Errorf(platform.TypeInvalidQuery, "statuses: unknown status %q", st)
		}
	}
	var err error
	if sf.ConversationID, sf.UserID, err = s.internalIDs(ctx, botID, f.ConversationID, f.UserID); err != nil {
		return nil, "", err
	}
	ws, next, err := s.store.ListWorkflows(ctx, sf)
	if err != nil {
		return nil, "", err
	}
	out := make([]WorkflowView, len(ws))
	for i, w := range ws {
		out[i] = s.workflowView(ctx, botID, w)
	}
	return out, next, nil
}

// WorkflowEvent prepares the workflow_update a job delivers: for a
// time-out, it first times the workflow out (if it is still active and its
// timeoutAt has come; else there is nothing to deliver: ErrNotFound). It
// returns the event's payload.
func (s *Service) WorkflowEvent(ctx context.Context, botID, id, update string) (json.RawMessage, error) {
	for range patchAttempts {
		w, err := s.store.GetWorkflow(ctx, botID, id)
		if err != nil {
			return nil, err
		}
		switch update {
		case WorkflowStarted:
			if w.Status != platform.WorkflowPending {
				return nil, platform.ErrNotFound // already taken up, or finished
			}
		case WorkflowTimedOut:
			now := s.clock.Now()
			if !platform.WorkflowActive(w.Status) || now.Before(w.TimeoutAt) {
				return nil, platform.ErrNotFound // finished, or its time-out was moved later
			}
			w.Status, w.FailureReason, w.CompletedAt, w.UpdatedAt = platform.WorkflowTimedOut, "the workflow passed its timeoutAt", &now, now
			if err := s.store.UpdateWorkflow(ctx, w); errors.Is(err, platform.ErrConflict) {
				continue
			} else if err != nil {
				return nil, err
			}
			w.Version++
		default:
			return nil, fmt.Errorf("unknown workflow update %q", update)
		}
		v := s.workflowView(ctx, botID, w)
		payload := map[string]any{"type": update, "workflow": WorkflowJSON(v)}
		if w.ConversationID != "" {
			if c, err := s.store.GetConversationByID(ctx, w.ConversationID); err == nil {
				n, _ := s.store.CountMessages(ctx, c.ID)
				payload["conversation"] = ConversationJSON(c, n)
			}
		}
		if w.UserID != "" {
			if u, err := s.store.GetChatUser(ctx, botID, w.UserID); err == nil {
				payload["user"] = UserJSON(u)
			}
		}
		return json.Marshal(payload)
	}
	return nil, platform.Errorf(platform.TypeResourceLocked, "workflow %q is being written by others", id)
}
