package httpapi

import (
	"math"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Bot, bot API key and bot log handlers of the Admin API (routes in admin.go).

func (a *api) createBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in admin.BotInput
	if err := decode(r, &in); err != nil {
		return err
	}
	b, err := a.Admin.CreateBot(r.Context(), act, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"bot": toBot(act, b, a.Admin, byAlias(r), a.Admin.Installed(r.Context(), b))})
	return nil
}

func (a *api) getBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	b, err := a.Admin.GetBot(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"bot": toBot(act, b, a.Admin, byAlias(r), a.Admin.Installed(r.Context(), b))})
	return nil
}

func (a *api) updateBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in admin.BotInput
	if err := decode(r, &in); err != nil {
		return err
	}
	b, err := a.Admin.UpdateBot(r.Context(), act, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"bot": toBot(act, b, a.Admin, byAlias(r), a.Admin.Installed(r.Context(), b))})
	return nil
}

func (a *api) deleteBot(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Admin.DeleteBot(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) rotateSigningSecret(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	secret, err := a.Admin.RotateSigningSecret(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"newSigningSecret": secret})
	return nil
}

func (a *api) listBots(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	q := newQuery(r)
	p, err := page(q, 20)
	if err != nil {
		return err
	}
	f := store.BotFilter{Page: p, IntegrationNames: q.list("integrationNames")}
	dev, err := q.boolean("dev")
	if err != nil {
		return err
	}
	f.Dev = dev != nil && *dev
	if f.Tags, err = q.tags(); err != nil {
		return err
	}
	if f.SortField, err = q.enum("sortField", "createdAt", "updatedAt"); err != nil {
		return err
	}
	dir, err := q.enum("sortDirection", "asc", "desc")
	if err != nil {
		return err
	}
	f.Descending = dir == "desc"
	bots, next, err := a.Admin.ListBots(r.Context(), act, f, q.list("pluginNames"))
	if err != nil {
		return err
	}
	resp := struct {
		Bots []botListItemJSON `json:"bots"`
		Meta metaJSON          `json:"meta"`
	}{make([]botListItemJSON, len(bots)), metaJSON{next}}
	for i, b := range bots {
		resp.Bots[i] = toBotListItem(b)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// parseTime reads an ISO 8601 query parameter.
func parseTime(q query, name string) (time.Time, error) {
	s := q.str(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, platform.Errorf(platform.TypeInvalidQuery, "%s: must be an ISO 8601 date-time such as 2025-01-31T12:00:00Z", name)
	}
	return t, nil
}

func (a *api) getBotLogs(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	f, err := logFilter(r)
	if err != nil {
		return err
	}
	f.BotID = r.PathValue("id")
	logs, next, err := a.Admin.BotLogs(r.Context(), act, f)
	return writeLogs(w, logs, next, err)
}

// getIntegrationLogs answers the lines an integration version wrote in the
// workspace's bots that installed it.
func (a *api) getIntegrationLogs(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	f, err := logFilter(r)
	if err != nil {
		return err
	}
	logs, next, err := a.Admin.IntegrationLogs(r.Context(), act, r.PathValue("id"), f)
	return writeLogs(w, logs, next, err)
}

// logFilter reads the query of getBotLogs and getIntegrationLogs.
func logFilter(r *http.Request) (store.LogFilter, error) {
	q := newQuery(r)
	if q.str("timeStart") == "" {
		return store.LogFilter{}, platform.Errorf(platform.TypeInvalidQuery, "timeStart: is required")
	}
	f := store.LogFilter{Page: store.Page{Token: q.str("nextToken")}, Level: q.str("level"),
		UserID: q.str("userId"), ConversationID: q.str("conversationId"), WorkflowID: q.str("workflowId"), MessageContains: q.str("messageContains")}
	var err error
	if f.Start, err = parseTime(q, "timeStart"); err != nil {
		return f, err
	}
	f.End, err = parseTime(q, "timeEnd")
	return f, err
}

func writeLogs(w http.ResponseWriter, logs []platform.LogEntry, next string, err error) error {
	if err != nil {
		return err
	}
	type logJSON struct {
		Timestamp      string `json:"timestamp"`
		Level          string `json:"level"`
		Message        string `json:"message"`
		WorkflowID     string `json:"workflowId,omitempty"`
		UserID         string `json:"userId,omitempty"`
		ConversationID string `json:"conversationId,omitempty"`
	}
	out := make([]logJSON, len(logs))
	for i, l := range logs {
		out[i] = logJSON{platform.FormatTime(l.Timestamp), l.Level, l.Message, l.WorkflowID, l.UserID, l.ConversationID}
	}
	resp := map[string]any{"logs": out}
	if next != "" {
		resp["nextToken"] = next // top level, not in meta (compat-notes §2.3)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

var createBotKeySchema = schema("create-bot-key.json", `{"type":"object","additionalProperties":false,"required":["botId"],
	"properties":{"botId":{"type":"string"},"note":{"type":"string"}}}`)

func (a *api) createBotKey(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct{ BotID, Note string }
	if err := decode(r, &in); err != nil {
		return err
	}
	t, value, err := a.Admin.CreateBotKey(r.Context(), act, in.BotID, in.Note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toToken(t, value))
	return nil
}

func (a *api) listBotKeys(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	botID := newQuery(r).str("botId")
	if botID == "" {
		return platform.Errorf(platform.TypeInvalidQuery, "botId: is required")
	}
	ts, err := a.Admin.ListBotKeys(r.Context(), act, botID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"baks": tokensJSON(ts)})
	return nil
}

func (a *api) deleteBotKey(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	if err := a.Admin.DeleteBotKey(r.Context(), act, r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

func (a *api) getBotAnalytics(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	q := newQuery(r)
	var dates [2]time.Time
	for i, name := range []string{"startDate", "endDate"} {
		v := q.str(name)
		if v == "" {
			return platform.Errorf(platform.TypeInvalidQuery, "%s: is required", name)
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return platform.Errorf(platform.TypeInvalidQuery, "%s: must be an ISO 8601 date-time", name)
		}
		dates[i] = t
	}
	days, err := a.Admin.BotAnalytics(r.Context(), act, r.PathValue("id"), dates[0], dates[1])
	if err != nil {
		return err
	}
	records := make([]map[string]any, len(days))
	for i, d := range days {
		l := d.LLM
		records[i] = map[string]any{
			"startDateTimeUtc": platform.FormatTime(d.Start), "endDateTimeUtc": platform.FormatTime(d.Start.Add(24 * time.Hour)),
			"returningUsers": d.ReturningUsers, "newUsers": d.NewUsers, "sessions": d.Sessions, "messages": d.Messages,
			"userMessages": d.UserMessages, "botMessages": d.BotMessages, "events": d.Events, "eventTypes": d.EventTypes,
			"customEvents": d.CustomEvents,
			"llm": map[string]any{"calls": l.Calls, "errors": l.Errors, "inputTokens": l.InputTokens, "outputTokens": l.OutputTokens,
				"latency": statsJSON(l.Latency, 1, false), "tokensPerSecond": statsJSON(l.TokensPerSecond, 1, false),
				"cost": statsJSON(l.Cost, 1e9, true)},
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"records": records})
	return nil
}

// statsJSON renders figures as {mean, sd, min, max} (and sum), divided by
// unit; all zero when there are none.
func statsJSON(s store.Stats, unit float64, withSum bool) map[string]float64 {
	out := map[string]float64{"mean": 0, "sd": 0, "min": 0, "max": 0}
	if withSum {
		out["sum"] = s.Sum / unit
	}
	if s.N == 0 {
		return out
	}
	mean := s.Sum / float64(s.N)
	variance := s.SumSquares/float64(s.N) - mean*mean
	out["mean"], out["sd"] = mean/unit, math.Sqrt(max(variance, 0))/unit
	out["min"], out["max"] = s.Min/unit, s.Max/unit
	return out
}

var fetchHostsSchema = schema("fetch-hosts.json", `{"type":"object","additionalProperties":false,"required":["hosts"],
	"properties":{"hosts":{"type":"array","items":{"type":"string"}}}}`)

func fetchHostsJSON(b platform.Bot) map[string]any {
	hosts := b.Spec.FetchHosts
	if hosts == nil {
		hosts = []string{}
	}
	return map[string]any{"hosts": hosts}
}

// getFetchHosts answers the hosts a bot's code may fetch from (this
// server's operation; docs/bot-code.md#fetch).
func (a *api) getFetchHosts(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	b, err := a.Admin.GetBot(r.Context(), act, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fetchHostsJSON(b))
	return nil
}

func (a *api) setFetchHosts(w http.ResponseWriter, r *http.Request, act *platform.Actor) error {
	var in struct {
		Hosts []string `json:"hosts"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	b, err := a.Admin.SetFetchHosts(r.Context(), act, r.PathValue("id"), in.Hosts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fetchHostsJSON(b))
	return nil
}
